import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { slackCalls, TEAM, uniqueId } from "../channels/slack/helpers.ts";
import { opsDmEvent, sessionStub, waitFor } from "./helpers.ts";

/**
 * A failure must not become a side door: when triage of an event fails for good (a permanent error,
 * or a transient one past messages.processing.maxAttempts), the event is set aside, but only a sender the config
 * admits is told. A stranger's DM on a pairing account, or an unmentioned message in a gated
 * channel, never makes the bot speak — not even to say that something went wrong.
 */

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
    route: {
      channel: "slack",
      to: channel,
      replyToMessageId: ts,
      extra: { teamId: TEAM, chatType: "channel", mentioned: "0" },
    },
  });
  return { envelope, agentId: "main", sessionKey };
}

/** Accepts an event whose triage fails for good (invalid data: a bug), and waits until it is set aside. */
async function failTriageForGood(sessionKey: string, event: RoutedEvent): Promise<void> {
  const stub = sessionStub(sessionKey);
  expect(await stub.accept(event)).toEqual({ status: "accepted" });
  await waitFor(
    () =>
      runInDurableObject(
        stub,
        (_i, state) =>
          new SessionStore(state.storage).inbox.byKey(event.envelope.dedupKey)?.deadReason ??
          undefined,
      ),
    15_000,
    "the dead letter",
  );
  // Anything the outbox held would go out now.
  await runDurableObjectAlarm(stub);
  await new Promise((resolve) => setTimeout(resolve, 1500));
}

describe("an event set aside after failing triage", () => {
  it("from a stranger's DM on a pairing account: nothing is posted to them", async () => {
    const key = `agent:main:stranger-outage-${crypto.randomUUID()}`;
    const dm = uniqueId("D");
    // A sender id Postgres cannot store (NUL byte): the access look-up fails permanently.
    await failTriageForGood(
      key,
      opsDmEvent(key, `${uniqueId("USTRANGER")}\u0000`, dm, "hello? anyone?"),
    );
    expect(await slackCalls(undefined, dm)).toEqual([]);
  });

  it("an unmentioned message in a mention-gated channel: nothing is posted to the channel", async () => {
    const channel = uniqueId("C");
    const key = `agent:main:gated-outage-${crypto.randomUUID()}`;
    // Invalid data past the edge (the text is missing): mention gating fails on it, a bug.
    const event = unmentionedChannelMessage(key, channel);
    await failTriageForGood(key, {
      ...event,
      envelope: { ...event.envelope, text: undefined as unknown as string },
    });
    expect(await slackCalls(undefined, channel)).toEqual([]);
  });
});
