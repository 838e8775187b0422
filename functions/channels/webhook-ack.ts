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
