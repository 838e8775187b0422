import { env } from "cloudflare:test";
import type { InboundEnvelopeInput } from "../../functions/core/envelope.ts";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { slackMessageKeys } from "../../functions/channels/slack/parse.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import { TEAM, uniqueId } from "../channels/slack/helpers.ts";
import { withDb } from "../../functions/db/client.ts";
import { postgresAccessStore } from "../../functions/routing/access-store-postgres.ts";
import type { Env } from "../../workers/env.ts";

/** A web-chat event (operator access: no pairing, no Postgres look-ups) for `sessionKey`. */
export function webchatEvent(
  sessionKey: string,
  text: string,
  dedupKey = crypto.randomUUID(),
  extra: Partial<InboundEnvelopeInput> = {},
): RoutedEvent {
  const envelope = inboundEnvelopeSchema.parse({
    dedupKey: `webchat:${dedupKey}`,
    channel: "webchat",
    chatType: "direct",
    peerId: "tester",
    senderId: "tester",
    text,
    receivedAt: Date.now(),
    route: { channel: "webchat", to: "tester" },
    ...extra,
  } satisfies InboundEnvelopeInput);
  return { envelope, agentId: "main", sessionKey };
}

/**
 * A Slack DM on the "ops" account (the defaults a user gets: pairing, streaming partial, queue mode
 * steer), shaped as the Slack parser builds it, for `sessionKey` (tests pick a key of their own so
 * other files' traffic in agent:main:main cannot interleave). The sender must be approved first.
 */
export function opsDmEvent(
  sessionKey: string,
  sender: string,
  channel: string,
  text: string,
): RoutedEvent {
  const ts = `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
  const envelope = inboundEnvelopeSchema.parse({
    ...slackMessageKeys(TEAM, channel, ts, uniqueId("Ev")),
    channel: "slack",
    accountId: "ops",
    chatType: "direct",
    peerId: sender,
    teamId: TEAM,
    senderId: sender,
    messageId: ts,
    text,
    receivedAt: Date.now(),
    route: {
      channel: "slack",
      accountId: "ops",
      to: channel,
      replyToMessageId: ts,
      extra: { teamId: TEAM, senderId: sender, chatType: "direct", mentioned: "0" },
    },
  } satisfies InboundEnvelopeInput);
  return { envelope, agentId: "main", sessionKey };
}

/** Approves DM senders on the "ops" account, as `pairing approve` would. */
export async function approveOpsSenders(...senderIds: string[]): Promise<void> {
  await withDb(env as unknown as Env, async (db) => {
    const store = postgresAccessStore(db);
    for (const senderId of senderIds)
      await store.addApprovedSender(
        { channel: "slack", accountId: "ops", senderId, source: "admin" },
        Date.now(),
      );
  });
}

export function sessionStub(sessionKey: string) {
  return env.SESSIONS.get(env.SESSIONS.idFromName(sessionKey));
}

/** Reads a SessionDO.chat() NDJSON stream to its end. */
export async function collectRunEvents(stream: ReadableStream<Uint8Array>): Promise<RunEvent[]> {
  const text = await new Response(stream).text();
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RunEvent);
}

/** Scripting and reading the fake model server: shared with the model tests. */
export { script as scriptModel, recorded as modelRequests } from "../agent/model-helpers.ts";

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  label = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
