import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TEST_MATTERMOST } from "../../../functions/channels/mattermost/test-fixtures.ts";
import {
  FAKE_MATTERMOST_BOT,
  mattermostPosts,
  mmId,
  newScenario,
  recorded,
  scriptModel,
  settle,
} from "./helpers.ts";

/**
 * Mattermost button clicks at /mattermost/interactions/<account>: the caller's address must be
 * allowed (default loopback only) and `context._token` must be OpenClaw's HMAC over the context. The
 * token here is computed from the documented recipe with WebCrypto, not with the Worker's code.
 */

const WORKER = "https://edgeclaw.test";
const encoder = new TextEncoder();

async function hmacHex(key: string, data: string): Promise<string> {
  const k = await crypto.subtle.importKey(
    "raw",
    encoder.encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(data)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

/** Python's json.dumps(sort_keys=True, separators=(",", ":")) for plain ASCII values. */
function sortedCompact(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedCompact).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedCompact((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

async function signed(
  context: Record<string, unknown>,
  botToken: string = TEST_MATTERMOST.botToken,
): Promise<Record<string, unknown>> {
  const secret = await hmacHex("openclaw-mattermost-interactions", botToken);
  return { ...context, _token: await hmacHex(secret, sortedCompact(context)) };
}

function click(
  account: string,
  fields: {
    userId: string;
    channelId: string;
    channelName?: string;
    context: Record<string, unknown>;
    ip?: string;
  },
): Promise<Response> {
  const body = {
    user_id: fields.userId,
    user_name: "alice",
    channel_id: fields.channelId,
    channel_name: fields.channelName ?? "town-square",
    team_id: "team1",
    post_id: mmId("p"),
    trigger_id: mmId("t"),
    type: "",
    context: fields.context,
  };
  return SELF.fetch(`${WORKER}/mattermost/interactions/${account}`, {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": fields.ip ?? "127.0.0.1" },
    body: JSON.stringify(body),
  });
}

const context = () => ({
  action_id: "approve01",
  action: "approve",
  nested: { z: 1, a: [2, { y: "b", x: "a" }] },
});
const botPosts = async (channel: string) =>
  (await mattermostPosts(channel)).filter((p) => p.user_id === FAKE_MATTERMOST_BOT.id);

describe("Mattermost button clicks", () => {
  it("a click signed as the docs describe is accepted as a system event: 200, no run, nothing sent", async () => {
    const scenario = newScenario("mm-click");
    await scriptModel(scenario, [{ type: "text", text: "Must not be said." }]);
    const channel = TEST_MATTERMOST.openChannel;
    const before = (await botPosts(channel)).length;
    const res = await click("team", {
      userId: mmId("u"),
      channelId: channel,
      context: await signed({ ...context(), note: `[scenario:${scenario}]` }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    await settle(2000);
    expect(await recorded(scenario)).toEqual([]);
    expect(await botPosts(channel)).toHaveLength(before);
  });

  it("refuses a forged, missing, partial or another bot's _token (401), and sources outside allowedSourceIps (403)", async () => {
    const userId = mmId("u");
    const channelId = TEST_MATTERMOST.openChannel;
    const good = await signed(context());
    const cases: Array<[Record<string, unknown>, number, string?]> = [
      [{ ...good, _token: "0".repeat(64) }, 401],
      [{ ...good, action: "reject" }, 401], // context changed after signing
      [{ ...context() }, 401], // no _token
      [{ ...context(), _token: (await signed({ action_id: "approve01" }))._token }, 401], // signed a subset
      [await signed(context(), "another-bot-token"), 401],
      [good, 403, "203.0.113.9"],
      [good, 403, ""],
    ];
    for (const [ctx, status, ip] of cases) {
      const res = await click("team", {
        userId,
        channelId,
        context: ctx,
        ...(ip !== undefined ? { ip } : {}),
      });
      expect(res.status, JSON.stringify({ ctx, ip })).toBe(status);
    }
    // An address in the allowed range passes; the default account allows loopback only.
    expect(
      (await click("team", { userId, channelId, context: good, ip: "198.51.100.20" })).status,
    ).toBe(200);
    expect(
      (await click("default", { userId, channelId, context: good, ip: "198.51.100.20" })).status,
    ).toBe(403);
  });

  it("a stranger's click under the defaults (pairing) is stored and refused by triage: no pairing code, nothing sent", async () => {
    const stranger = mmId("s");
    const dm = mmId("dm");
    const res = await click("default", {
      userId: stranger,
      channelId: dm,
      channelName: [FAKE_MATTERMOST_BOT.id, stranger].sort().join("__"),
      context: await signed(context()),
    });
    expect(res.status).toBe(200);
    await settle(2500);
    expect(await botPosts(dm)).toEqual([]);
  });
});
