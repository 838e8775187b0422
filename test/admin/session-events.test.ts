import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { storedEvents } from "../../functions/channels/webhook-ack.ts";
import {
  forgetPairingWhenDone,
  messageEvent,
  OPS_SIGNING_SECRET,
  postSigned,
  uniqueId,
  waitFor,
} from "../channels/slack/helpers.ts";

/**
 * Why an event got no answer, from the Worker that decided it: a webhook's ack names the events it
 * stored (`x-edgeclaw-event`: session key and dedup key), and GET
 * /admin/sessions/:key/events/:dedupKey (gateway token) says what triage made of each — refused with
 * the reason and the config key that would change it, pairing, kept as group context, accepted.
 * `edgeclaw simulate` prints this instead of waiting out its timeout.
 */
const BASE = "https://edgeclaw.test/admin";
const auth = { authorization: "Bearer test-gateway-token" };

interface Decision {
  sessionKey: string;
  dedupKey: string;
  state: string;
  outcome: string;
  reason?: string;
  configKey?: string;
}

function decisionUrl(event: { sessionKey: string; dedupKey: string }): string {
  return `${BASE}/sessions/${encodeURIComponent(event.sessionKey)}/events/${encodeURIComponent(event.dedupKey)}`;
}

/** Posts a signed Slack event and waits until the session has decided it. */
async function decided(body: string, options: { path?: string; secret?: string } = {}) {
  const response = await postSigned(body, options);
  expect(response.status).toBe(200);
  const events = storedEvents(response.headers.get("x-edgeclaw-event"));
  expect(events).toHaveLength(1);
  const decision = await waitFor(async () => {
    const answer = await SELF.fetch(decisionUrl(events[0]!), { headers: auth });
    expect(answer.status).toBe(200);
    const json = (await answer.json()) as Decision;
    return json.outcome === "pending" ? undefined : json;
  });
  return { event: events[0]!, decision };
}

function channelMessage(channel: string, text: string, user = uniqueId("U")) {
  return messageEvent({
    eventId: uniqueId("Ev"),
    channel,
    channelType: "channel",
    user,
    text,
    ts: `${Math.floor(Date.now() / 1000)}.${uniqueId("").slice(-6)}`,
  });
}

describe("admin: what a session did with one event", () => {
  it("a group the allowlist does not name: refused, with the reason and the config key", async () => {
    // The "lockdown" account opened DMs and listed no channel (groupPolicy allowlist by default).
    const { event, decision } = await decided(channelMessage(uniqueId("C"), "<@UBOTTEST> hi"), {
      path: "/slack/lockdown/events",
      secret: OPS_SIGNING_SECRET,
    });
    expect(event.sessionKey).toMatch(/^agent:main:slack:channel:/);
    expect(decision).toMatchObject({
      sessionKey: event.sessionKey,
      dedupKey: event.dedupKey,
      state: "settled",
      outcome: "refused",
      reason: "groupPolicy allowlist with an empty allowlist blocks every group",
      configKey: "channels.slack.channels",
    });
  });

  it("a stranger's DM on a pairing account: pairing, and the key that would let them in", async () => {
    const stranger = uniqueId("USTRANGER");
    forgetPairingWhenDone(stranger);
    const dm = messageEvent({
      eventId: uniqueId("Ev"),
      channel: uniqueId("D"),
      channelType: "im",
      user: stranger,
      text: "hello",
      ts: `${Math.floor(Date.now() / 1000)}.000100`,
    });
    const { decision } = await decided(dm, {
      path: "/slack/ops/events",
      secret: OPS_SIGNING_SECRET,
    });
    expect(decision).toMatchObject({
      outcome: "pairing",
      reason: expect.stringMatching(/not allowed yet/),
      configKey: "channels.slack.allowFrom",
    });
  });

  it("an allowed group without a mention: kept as context, and the key that drops the mention rule", async () => {
    const { decision } = await decided(channelMessage("C0THREADS", "no mention here"));
    expect(decision).toMatchObject({
      outcome: "no-mention",
      configKey: "channels.slack.requireMention",
    });
  });

  it("an allowed DM: accepted for a run", async () => {
    const dm = messageEvent({
      eventId: uniqueId("Ev"),
      channel: uniqueId("D"),
      channelType: "im",
      text: "hello there",
      ts: `${Math.floor(Date.now() / 1000)}.000200`,
    });
    const { decision } = await decided(dm);
    expect(decision.outcome).toBe("accepted");
    expect(decision.reason).toBeUndefined();
  });

  it("needs the gateway token; an event the session does not hold is 404", async () => {
    const unknown = { sessionKey: "agent:main:slack:channel:cnothing", dedupKey: "slack:T:none" };
    expect((await SELF.fetch(decisionUrl(unknown))).status).toBe(401);
    expect(
      (await SELF.fetch(decisionUrl(unknown), { headers: { authorization: "Bearer wrong" } }))
        .status,
    ).toBe(401);
    const missing = await SELF.fetch(decisionUrl(unknown), { headers: auth });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe(
      "event_not_found",
    );
  });
});
