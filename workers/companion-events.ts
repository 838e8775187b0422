import type { Env } from "./env.ts";
import type { SocketAccount, SocketPieces } from "../functions/channels/channel.ts";
import type { EventResult, EventsRequest } from "../functions/channels/companion/wire.ts";
import {
  authorizeIngressEnvelope,
  type IngressKeyGrant,
} from "../functions/channels/companion/authorize.ts";
import { ingestEnvelope } from "./ingest.ts";

/**
 * One batch of raw socket events: each is parsed by the channel's own parser (the same as its
 * webhook mode, so the same dedup keys) and every envelope goes through the same durable accept as
 * a webhook. Events are handled one after another, in the order the companion read them (per-account
 * FIFO); an event's envelopes are accepted in parallel, as the webhook handler does.
 */
export async function storeSocketEvents(
  env: Env,
  grant: IngressKeyGrant,
  target: { socket: SocketPieces; account: SocketAccount },
  request: EventsRequest,
): Promise<EventResult[]> {
  const results: EventResult[] = [];
  for (const event of request.events)
    results.push(await storeOne(env, grant, target, request.channel, event));
  return results;
}

async function storeOne(
  env: Env,
  grant: IngressKeyGrant,
  { socket, account }: { socket: SocketPieces; account: SocketAccount },
  channel: string,
  event: EventsRequest["events"][number],
): Promise<EventResult> {
  const { eventId } = event;
  let parsed;
  try {
    parsed = await socket.parse(
      { eventId, payload: event.payload, receivedAt: event.receivedAt },
      account,
      env,
    );
  } catch (error) {
    // A parser that throws is a bug on our side, not the event's fault: keep it for a retry after a fix.
    const message = error instanceof Error ? error.message : String(error);
    console.error(
      `channels.${channel} (${account.label}): socket event ${eventId} could not be parsed`,
      message,
    );
    return { eventId, status: "failed", error: `parse failed: ${message}` };
  }
  if (parsed.kind === "malformed")
    return {
      eventId,
      status: "failed",
      error: `malformed ${channel} event: ${parsed.reason}`,
      permanent: true,
    };
  if (parsed.kind === "respond") return { eventId, status: "stored", outcomes: [], events: [] };
  for (const envelope of parsed.envelopes) {
    // The parser is ours, but the key's limits hold for whatever it produced (defence in depth).
    const authorized = authorizeIngressEnvelope(grant, envelope);
    if (!authorized.ok)
      return {
        eventId,
        status: "failed",
        error: `forbidden: ${authorized.reason}`,
        permanent: true,
      };
  }
  const settled = await Promise.allSettled(
    parsed.envelopes.map((envelope) => ingestEnvelope(env, envelope)),
  );
  const failure = settled.find((outcome) => outcome.status === "rejected");
  if (failure) {
    const message =
      failure.reason instanceof Error ? failure.reason.message : String(failure.reason);
    console.error(
      `channels.${channel} (${account.label}): socket event ${eventId} not accepted`,
      message,
    );
    return { eventId, status: "failed", error: message };
  }
  const outcomes = settled.flatMap((outcome) =>
    outcome.status === "fulfilled" ? [outcome.value] : [],
  );
  const dropped = [
    ...(parsed.dropped ?? []),
    ...outcomes.flatMap((outcome) => (outcome.status === "unrouted" ? [outcome.reason] : [])),
  ];
  return {
    eventId,
    status: "stored",
    outcomes: outcomes.map((outcome) => outcome.status),
    // Named like a webhook's x-edgeclaw-event, so `edgeclaw simulate` can ask what became of it.
    events: outcomes.flatMap((outcome, index) =>
      outcome.status === "unrouted"
        ? []
        : [{ sessionKey: outcome.sessionKey, dedupKey: parsed.envelopes[index]!.dedupKey }],
    ),
    ...(dropped.length ? { dropped } : {}),
  };
}
