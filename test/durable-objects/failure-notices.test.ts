import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionDO } from "../../durable-objects/session.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { inboundEnvelopeSchema } from "../../functions/channels/envelope.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { slackCalls, TEAM, uniqueId } from "../channels/slack/helpers.ts";
import { opsDmEvent, sessionStub, waitFor } from "./helpers.ts";

/**
 * A failure must not become a side door: when triage of an event fails for good (Postgres down past
 * messages.processing.maxAttempts, or a bug), the event is set aside, but only a sender the config
 * admits is told. A stranger's DM on a pairing account, or an unmentioned message in a gated
 * channel, never makes the bot speak — not even to say that something went wrong.
 */

function pointDatabaseAt(instance: SessionDO, proxy: string | undefined): void {
  (instance as unknown as { env: typeof env }).env = { ...env, EDGECLAW_PG_WS_PROXY: proxy };
}

function unmentionedChannelMessage(sessionKey: string, channel: string): RoutedEvent {
  const ts = `${Math.floor(Date.now() / 1000)}.000100`;
  const envelope = inboundEnvelopeSchema.parse({
    dedupKey: `slack:${TEAM}:${uniqueId("Ev")}`,
    channel: "slack",
    chatType: "channel",
    peerId: channel,
    teamId: TEAM,
    senderId: uniqueId("U"),
    messageId: ts,
    text: "just chatting with colleagues",
    wasMentioned: false,
    receivedAt: Date.now(),
    route: { channel: "slack", to: channel, replyToMessageId: ts, extra: { teamId: TEAM, chatType: "channel", mentioned: "0" } },
  });
  return { envelope, agentId: "main", sessionKey };
}

/** Postgres unreachable for this object until the event has used up its attempts and is set aside. */
async function failTriageForGood(sessionKey: string, event: RoutedEvent): Promise<void> {
  const stub = sessionStub(sessionKey);
  await runInDurableObject(stub, (instance) => pointDatabaseAt(instance, "127.0.0.1:9"));
  expect(await stub.accept(event)).toEqual({ status: "accepted" });
  await waitFor(
    () => runInDurableObject(stub, (_i, state) => ((new SessionStore(state.storage).inboxByKey(event.envelope.dedupKey)?.failures ?? 0) >= 1 ? true : undefined)),
    10_000,
    "the first failed attempt",
  );
  // Skip the backoff waits: the event has failed all but its last allowed attempt.
  await runInDurableObject(stub, (_i, state) => {
    state.storage.sql.exec(`UPDATE inbox SET failures = 11 WHERE dedup_key = ?`, event.envelope.dedupKey);
    new SessionStore(state.storage).setMeta("retryAt", String(Date.now() - 1));
  });
  await runDurableObjectAlarm(stub);
  const dead = await waitFor(
    () => runInDurableObject(stub, (_i, state) => new SessionStore(state.storage).inboxByKey(event.envelope.dedupKey)?.deadReason ?? undefined),
    10_000,
    "the dead letter",
  );
  expect(dead).toMatch(/^gave up after 12 attempts/);
  // Postgres is back; anything the outbox still held would go out now.
  await runInDurableObject(stub, (instance) => pointDatabaseAt(instance, env.EDGECLAW_PG_WS_PROXY));
  await runDurableObjectAlarm(stub);
  await new Promise((resolve) => setTimeout(resolve, 1500));
}

describe("an event set aside after failing triage", () => {
  it("from a stranger's DM on a pairing account: nothing is posted to them", async () => {
    const key = `agent:main:stranger-outage-${crypto.randomUUID()}`;
    const dm = uniqueId("D");
    await failTriageForGood(key, opsDmEvent(key, uniqueId("USTRANGER"), dm, "hello? anyone?"));
    expect(await slackCalls(undefined, dm)).toEqual([]);
  });

  it("an unmentioned message in a mention-gated channel: nothing is posted to the channel", async () => {
    const channel = uniqueId("C");
    const key = `agent:main:gated-outage-${crypto.randomUUID()}`;
    await failTriageForGood(key, unmentionedChannelMessage(key, channel));
    expect(await slackCalls(undefined, channel)).toEqual([]);
  });
});
