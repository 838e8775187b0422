import { env } from "cloudflare:test";
import type { InboundEnvelopeInput } from "../../functions/channels/envelope.ts";
import { inboundEnvelopeSchema } from "../../functions/channels/envelope.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";

/** A web-chat event (operator access: no pairing, no Postgres look-ups) for `sessionKey`. */
export function webchatEvent(sessionKey: string, text: string, dedupKey = crypto.randomUUID(), extra: Partial<InboundEnvelopeInput> = {}): RoutedEvent {
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

export async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000, label = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
