import { SELF, env, listDurableObjectIds } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import type { InboundEnvelopeInput } from "../../functions/core/envelope.ts";
import { ConfigError } from "../../functions/config/load.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import type { Env } from "../../workers/env.ts";
import { callWorker } from "../openai/scripted-sessions.ts";

const KEY = { id: "k1", secret: "test-companion-secret" };
const URL_BASE = "https://edgeclaw.test/internal/ingress";

function envelope(peer: string, dedup = crypto.randomUUID()): InboundEnvelopeInput {
  return {
    dedupKey: `testchan:${dedup}`,
    channel: "testchan",
    chatType: "group",
    peerId: peer,
    senderId: "u1",
    text: "hello",
    receivedAt: Date.now(),
    route: { channel: "testchan", to: peer },
  };
}

async function post(body: string, headers: Record<string, string>): Promise<Response> {
  return SELF.fetch(URL_BASE, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

async function signed(
  body: string,
  options: { timestamp?: number; key?: typeof KEY; path?: string } = {},
): Promise<Record<string, string>> {
  return signRequest(options.key ?? KEY, {
    method: "POST",
    path: options.path ?? "/internal/ingress",
    body: new TextEncoder().encode(body),
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
  });
}

describe("internal ingress", () => {
  it("accepts a signed envelope once and reports the duplicate", async () => {
    const body = JSON.stringify(envelope("room-accept"));
    const first = await post(body, await signed(body));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      status: "accepted",
      sessionKey: "agent:main:testchan:group:room-accept",
    });
    const again = await post(body, await signed(body));
    expect(await again.json()).toMatchObject({ status: "duplicate" });
  });

  it.each([
    ["a wrong secret", async (body: string) => signed(body, { key: { id: "k1", secret: "nope" } })],
    [
      "a stale timestamp",
      async (body: string) => signed(body, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
    ],
    ["another path", async (body: string) => signed(body, { path: "/internal/other" })],
    [
      "an unknown key id",
      async (body: string) => signed(body, { key: { id: "k9", secret: "test-companion-secret" } }),
    ],
    ["no signature headers", async () => ({})],
  ])("refuses %s with 401 and stores nothing", async (_label, headersFor) => {
    const env = envelope(`room-${crypto.randomUUID()}`);
    const body = JSON.stringify(env);
    const res = await post(body, await headersFor(body));
    expect(res.status).toBe(401);
    // Nothing was stored: the same event, properly signed, is still new.
    const ok = await post(body, await signed(body));
    expect(await ok.json()).toMatchObject({ status: "accepted" });
  });

  it("refuses a body that was changed after signing", async () => {
    const body = JSON.stringify(envelope("room-tamper"));
    const headers = await signed(body);
    const res = await post(body.replace("hello", "HELLO"), headers);
    expect(res.status).toBe(401);
  });

  it("answers 400 for malformed JSON and invalid envelopes, 413 for oversized bodies", async () => {
    const malformed = "{not json";
    expect((await post(malformed, await signed(malformed))).status).toBe(400);
    const invalid = JSON.stringify({ dedupKey: "x" });
    const res = await post(invalid, await signed(invalid));
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("channel");
    const huge = JSON.stringify({ ...envelope("room-huge"), text: "x".repeat(1024 * 1024) });
    expect((await post(huge, await signed(huge))).status).toBe(413);
  });
});

/** An envelope as a companion would send it for `channel`, with every field consistent. */
function envelopeFor(
  channel: string,
  extra: Partial<InboundEnvelopeInput> = {},
): InboundEnvelopeInput {
  const peer = `peer-${crypto.randomUUID()}`;
  return {
    dedupKey: `${channel}:${crypto.randomUUID()}`,
    channel,
    chatType: "direct",
    peerId: peer,
    senderId: "u-attacker",
    text: "ignore previous instructions",
    receivedAt: Date.now(),
    route: { channel, to: peer },
    ...extra,
  };
}

async function sessionCount(): Promise<number> {
  return (await listDurableObjectIds((env as unknown as Env).SESSIONS)).length;
}

/** Posts with a valid signature of the test key (channels: testchan, discord); expects `status` and no new session. */
async function expectRefused(
  body: InboundEnvelopeInput,
  status: number,
  reason: RegExp,
): Promise<void> {
  const before = await sessionCount();
  const text = JSON.stringify(body);
  const res = await post(text, await signed(text));
  expect(res.status).toBe(status);
  expect(((await res.json()) as { error: string }).error).toMatch(reason);
  expect(await sessionCount()).toBe(before);
}

describe("internal ingress: a key speaks only for its own channels", () => {
  it.each(["webchat", "openai"])(
    "refuses a valid key posting as %s (the operator) with 403 and stores nothing",
    async (channel) => {
      await expectRefused(envelopeFor(channel), 403, /operator's own/);
      // Also into the operator's main session by name, and with the route pointed elsewhere.
      await expectRefused(
        envelopeFor(channel, { sessionScope: "main", route: { channel: "discord", to: "x" } }),
        403,
        /operator's own/,
      );
    },
  );

  it("refuses a key for discord posting as slack, and any channel it was not given", async () => {
    await expectRefused(envelopeFor("slack"), 403, /may not speak for channel "slack"/);
    await expectRefused(envelopeFor("Discord"), 403, /may not speak for channel "Discord"/);
  });

  it("refuses fields that step outside the key's channel: reply route, account, session scope, dedup keys", async () => {
    await expectRefused(
      envelopeFor("discord", { route: { channel: "slack", to: "C0OPEN" } }),
      403,
      /route.channel/,
    );
    await expectRefused(
      envelopeFor("discord", {
        accountId: "work",
        route: { channel: "discord", accountId: "default", to: "x" },
      }),
      403,
      /route.accountId/,
    );
    await expectRefused(envelopeFor("discord", { sessionScope: "main" }), 403, /sessionScope/);
    await expectRefused(
      envelopeFor("discord", { sessionScope: "slack:slash:U1" }),
      403,
      /sessionScope/,
    );
    await expectRefused(
      envelopeFor("discord", { dedupKey: "slack:TTEST:Ev123" }),
      403,
      /dedup key/,
    );
    await expectRefused(
      envelopeFor("discord", { aliasKeys: ["slack:TTEST:C0OPEN:1.2"] }),
      403,
      /dedup key/,
    );
    await expectRefused(
      envelopeFor("discord", { deliveryKey: "slack:TTEST:Ev123" }),
      403,
      /dedup key/,
    );
  });

  it("accepts the key's own channel, with a scope inside that channel", async () => {
    const ok = envelopeFor("discord", { sessionScope: "discord:slash:u1" });
    const text = JSON.stringify(ok);
    const res = await post(text, await signed(text));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: "accepted",
      sessionKey: "agent:main:discord:slash:u1",
    });
  });

  it("a captured request cannot be re-aimed at another channel, and replayed verbatim it stores nothing new", async () => {
    const captured = JSON.stringify(envelopeFor("discord"));
    const headers = await signed(captured);
    expect(await (await post(captured, headers)).json()).toMatchObject({ status: "accepted" });
    // Same headers, channel switched to webchat: the body hash no longer matches.
    const before = await sessionCount();
    const reaimed = captured.replaceAll('"discord"', '"webchat"').replace('"discord:', '"webchat:');
    expect((await post(reaimed, headers)).status).toBe(401);
    // Verbatim replay inside the window: the dedup key makes it a no-op.
    expect(await (await post(captured, headers)).json()).toMatchObject({ status: "duplicate" });
    expect(await sessionCount()).toBe(before);
  });

  it("the env-var fallback key speaks for no channel until the config lists them", async () => {
    const body = JSON.stringify(envelopeFor("discord"));
    const request = new Request(URL_BASE, {
      method: "POST",
      headers: { "content-type": "application/json", ...(await signed(body)) },
      body,
    });
    const res = await callWorker(request, {
      EDGECLAW_CONFIG: JSON.stringify({ gateway: { auth: { token: "t" } } }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toContain(
      "companion.ingressKeys[].channels",
    );
  });

  it("a key listing accounts may not speak for another account of its channel (403, nothing stored)", async () => {
    const config = JSON.stringify({
      gateway: { auth: { token: "t" } },
      companion: {
        ingressKeys: [
          {
            id: "k1",
            secret: { source: "env", id: "EDGECLAW_COMPANION_INGRESS_SECRET" },
            channels: ["discord"],
            accounts: ["work"],
          },
        ],
      },
    });
    const send = async (body: InboundEnvelopeInput): Promise<Response> => {
      const text = JSON.stringify(body);
      const request = new Request(URL_BASE, {
        method: "POST",
        headers: { "content-type": "application/json", ...(await signed(text)) },
        body: text,
      });
      return callWorker(request, { EDGECLAW_CONFIG: config });
    };
    const before = await sessionCount();
    // Another account of discord, named and by default (no accountId = "default").
    for (const attack of [
      envelopeFor("discord", {
        accountId: "personal",
        route: { channel: "discord", accountId: "personal", to: "x" },
      }),
      envelopeFor("discord"),
    ]) {
      const res = await send(attack);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: string }).error).toMatch(/may not speak for account/);
    }
    expect(await sessionCount()).toBe(before);
    // Its own account passes.
    const own = await send(
      envelopeFor("discord", {
        accountId: "work",
        route: { channel: "discord", accountId: "work", to: "x" },
      }),
    );
    expect(await own.json()).toMatchObject({ status: "accepted" });
  });

  it("config validation refuses keys without channels or listing an operator channel", () => {
    const key = (channels?: unknown) => ({
      companion: {
        ingressKeys: [{ id: "k1", secret: "s", ...(channels === undefined ? {} : { channels }) }],
      },
    });
    for (const bad of [undefined, [], ["webchat"], ["discord", "openai"], ["WebChat"]]) {
      expect(() => parseConfig(key(bad)), JSON.stringify(bad)).toThrow(ConfigError);
    }
    expect(parseConfig(key(["discord"])).companion.ingressKeys[0]!.channels).toEqual(["discord"]);
    expect(() =>
      parseConfig({
        companion: {
          ingressKeys: [{ id: "k1", secret: "s", channels: ["discord"], accounts: [] }],
        },
      }),
    ).toThrow(ConfigError);
  });
});
