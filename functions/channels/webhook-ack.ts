import type { AcceptResult } from "./channel.ts";

/**
 * The ack most platforms expect: 200 with an empty body once every envelope is stored (accepted or
 * a duplicate) or dropped by config, 500 otherwise so the platform retries (the SessionDO's dedup
 * makes the retry safe). The headers say what happened, for operators and tests:
 * `x-openclaw-delivery-accepted: durable` when something was stored, `x-edgeclaw-ingest` with each
 * envelope's outcome (accepted, duplicate, unrouted — the metrics read it), `x-edgeclaw-dropped`
 * with why an event was not taken.
 */
export function defaultWebhookAck(result: AcceptResult): Response {
  const statuses = result.outcomes.map((outcome) => outcome.status);
  if (!result.allStored)
    return Response.json(
      { error: "not accepted, retry" },
      { status: 500, headers: { "x-edgeclaw-ingest": statuses.join(",") } },
    );
  const headers = new Headers();
  const dropped = [
    ...(result.dropped ?? []),
    ...result.outcomes.flatMap((outcome) =>
      outcome.status === "unrouted" ? [outcome.reason] : [],
    ),
  ];
  if (statuses.some((status) => status === "accepted" || status === "duplicate"))
    headers.set("x-openclaw-delivery-accepted", "durable");
  if (statuses.length) headers.set("x-edgeclaw-ingest", statuses.join(","));
  if (dropped.length) headers.set("x-edgeclaw-dropped", dropped.join("; ").slice(0, 120));
  return new Response(null, { status: 200, headers });
}

/** At most this many events are named in `x-edgeclaw-event` (a header stays small). */
const MAX_NAMED_EVENTS = 10;

/**
 * The ack with `x-edgeclaw-event`: `<session key> <dedup key>` (each URI-encoded) per stored event,
 * comma-separated. It names only what the platform sent (its ids, the conversation) and where it
 * is kept; what became of it is for the gateway token to ask (GET /admin/sessions/:key/events/:dedupKey).
 */
export function withStoredEvents(
  response: Response,
  events: Array<{ sessionKey: string; dedupKey: string }>,
): Response {
  if (!events.length) return response;
  const value = events
    .slice(0, MAX_NAMED_EVENTS)
    .map((event) => `${encodeURIComponent(event.sessionKey)} ${encodeURIComponent(event.dedupKey)}`)
    .join(", ");
  const headers = new Headers(response.headers);
  headers.set("x-edgeclaw-event", value);
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** The events an ack names in `x-edgeclaw-event` (the reader of withStoredEvents). */
export function storedEvents(
  header: string | null,
): Array<{ sessionKey: string; dedupKey: string }> {
  if (!header) return [];
  return header.split(",").flatMap((part) => {
    const [sessionKey, dedupKey] = part.trim().split(" ");
    return sessionKey && dedupKey
      ? [{ sessionKey: decodeURIComponent(sessionKey), dedupKey: decodeURIComponent(dedupKey) }]
      : [];
  });
}
