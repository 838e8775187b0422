import { env } from "cloudflare:test";
import { inject } from "vitest";
import type { InboundEnvelopeInput } from "../../functions/channels/envelope.ts";
import { inboundEnvelopeSchema } from "../../functions/channels/envelope.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import type { FakeModelStep, RecordedModelRequest } from "../fakes/model-server.ts";

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

export async function scriptModel(scenario: string, steps: FakeModelStep[]): Promise<void> {
  const res = await fetch(`${inject("fakeModelUrl")}/_control/script`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ scenario, steps }),
  });
  if (!res.ok) throw new Error(`scripting the fake model failed: ${res.status} ${await res.text()}`);
}

export async function modelRequests(scenario: string): Promise<RecordedModelRequest[]> {
  const res = await fetch(`${inject("fakeModelUrl")}/_control/requests?scenario=${encodeURIComponent(scenario)}`);
  return ((await res.json()) as { requests: RecordedModelRequest[] }).requests;
}

export async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000, label = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
