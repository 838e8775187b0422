import { metricsShard, type MetricsNamespace } from "./shards.ts";
import { counterDelta, histogramDeltas, mergeDeltas, type Delta } from "./catalog.ts";

/**
 * Counters the Worker itself records: requests refused before any SessionDO sees them, and the ack
 * latency of every webhook request. The ack must not wait on them, so an isolate gathers deltas in
 * memory for `coalesceMs`, then sends them in one write to a metrics shard inside ctx.waitUntil
 * (which keeps the isolate alive until that write ends). A burst of N requests costs one write, not
 * N. The price: deltas of an isolate that dies inside the window are lost — acceptable for counts
 * that only inform an operator; nothing that guards security or money is counted this way.
 */

export interface WorkerMetricsSink {
  namespace: MetricsNamespace;
  waitUntil: (promise: Promise<unknown>) => void;
  coalesceMs: number;
  maxSeries: number;
}

let pending = new Map<string, number>();
let scheduled = false;

export function recordWorkerDeltas(sink: WorkerMetricsSink, deltas: Delta[]): void {
  mergeDeltas(pending, deltas);
  if (scheduled) return;
  scheduled = true;
  sink.waitUntil(
    new Promise((resolve) => setTimeout(resolve, sink.coalesceMs)).then(() =>
      flushWorkerDeltas(sink),
    ),
  );
}

async function flushWorkerDeltas(sink: WorkerMetricsSink): Promise<void> {
  scheduled = false;
  const batch: Delta[] = [...pending];
  pending = new Map();
  if (!batch.length) return;
  try {
    // Any shard: the scrape sums them all; a random pick spreads isolates' writes.
    await metricsShard(sink.namespace, crypto.randomUUID()).add(batch, sink.maxSeries);
  } catch {
    // Keep them for the next request's flush rather than lose them on a transient failure.
    mergeDeltas(pending, batch);
  }
}

/** What the answer to a webhook request says about the event(s) in it: one refusal reason per refused event. */
export interface IngressVerdict {
  refused: string[];
}

/**
 * Reads the outcome from the answer every channel gives (the generic handler's status codes):
 * 401 bad signature, 403 forbidden, 413 too large, 400 malformed, 404 unrouted, 5xx not stored;
 * on a 200, each `unrouted` in `x-edgeclaw-ingest` (one status per envelope) was not routed, and an
 * `x-edgeclaw-dropped` with no envelope at all was ignored by the channel (a bot's own echo).
 * Accepted and duplicate events are counted by their SessionDO.
 */
export function ingressVerdict(response: Response): IngressVerdict {
  const status = response.status;
  const one = (reason: string): IngressVerdict => ({ refused: [reason] });
  if (status === 401) return one("bad_signature");
  if (status === 403) return one("forbidden");
  if (status === 413) return one("too_large");
  if (status === 400 || status === 415 || status === 422) return one("malformed");
  if (status === 404) return one("unrouted");
  if (status === 429) return one("rate_limited");
  if (status >= 500) return one("not_stored");
  const statuses = (response.headers.get("x-edgeclaw-ingest") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (statuses.length) return { refused: statuses.filter((s) => s === "unrouted") };
  if (response.headers.has("x-edgeclaw-dropped")) return one("ignored");
  return { refused: [] };
}

/** The deltas for one webhook request: its latency, and its refusal if it was refused. */
export function ingressDeltas(
  channel: string,
  response: Response,
  latencySeconds: number,
): Delta[] {
  const verdict = ingressVerdict(response);
  const deltas = histogramDeltas("edgeclaw_ack_latency_seconds", { channel }, latencySeconds);
  for (const reason of verdict.refused)
    deltas.push(counterDelta("edgeclaw_events_refused_total", { channel, reason }));
  return deltas;
}
