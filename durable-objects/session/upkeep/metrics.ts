import {
  counterDelta,
  histogramDeltas,
  type Delta,
  type CounterName,
  type HistogramName,
  type Labels,
} from "../../../functions/metrics/catalog.ts";
import { metricsShard } from "../../../functions/metrics/shards.ts";
import type { SessionState } from "../state.ts";

/**
 * This session's counters (their pending map: metrics-store.ts). Counting is one SQLite upsert in
 * the object's own storage, written with whatever the step writes anyway — no network, so the
 * accept path pays microseconds. At the end of an alarm pass (and at most every
 * diagnostics.metrics.flushIntervalMs) the accumulated deltas go to the session's metrics shard as
 * one numbered batch: the batch is moved to meta `metricsBatch` before it is sent, so a send whose
 * answer was lost is resent unchanged and the shard applies it once (durable-objects/metrics-shard.ts).
 * Counts made meanwhile wait in meta `metricsPending` for the next batch.
 */

const BATCH_KEY = "metricsBatch" as const;
const BATCH_NO_KEY = "metricsBatchNo" as const;
const FLUSHED_AT_KEY = "metricsFlushedAt" as const;
const QUEUE_DEPTH_KEY = "metricsQueueDepth" as const;

interface PendingBatch {
  no: number;
  deltas: Delta[];
}

function enabled(s: SessionState): boolean {
  return s.config.diagnostics.enabled;
}

export function countSession(
  s: SessionState,
  name: CounterName,
  labels: Labels = {},
  by = 1,
): void {
  if (enabled(s)) addPending(s, [counterDelta(name, labels, by)]);
}

export function observeSession(
  s: SessionState,
  name: HistogramName,
  labels: Labels,
  value: number,
): void {
  if (enabled(s)) addPending(s, histogramDeltas(name, labels, value));
}

function addPending(s: SessionState, deltas: Delta[]): void {
  s.store.metrics.add(deltas);
}

/** When the alarm must wake to hand counters over (undefined: nothing waiting). */
export function metricsFlushDueAt(s: SessionState, now: number): number | undefined {
  if (!hasPending(s) && s.store.meta.getJson(BATCH_KEY) === undefined) return undefined;
  return Math.max(
    now,
    Number(s.store.meta.get(FLUSHED_AT_KEY) ?? 0) + s.config.diagnostics.metrics.flushIntervalMs,
  );
}

function hasPending(s: SessionState): boolean {
  return s.store.metrics.hasAny();
}

/** Sends the pending counters (or the batch still unacknowledged) to this session's shard. Never throws. */
export async function flushSessionMetrics(s: SessionState, now = Date.now()): Promise<void> {
  const due = metricsFlushDueAt(s, now);
  if (due === undefined || due > now) return;
  const batch = s.store.meta.getJson(BATCH_KEY) ?? takeBatch(s);
  if (!batch) return;
  s.store.meta.set(FLUSHED_AT_KEY, String(now));
  try {
    const source = s.ctx.id.toString();
    await metricsShard(s.env.METRICS, source).applyBatch(
      source,
      batch.no,
      batch.deltas,
      s.config.diagnostics.metrics.maxSeries,
    );
    s.store.meta.delete(BATCH_KEY);
  } catch {
    // The shard is unreachable: the same batch goes again on a later pass (metricsFlushDueAt keeps it due).
  }
}

/** Moves pending deltas (plus the queue-depth change since the last batch) into a numbered batch, atomically. */
function takeBatch(s: SessionState): PendingBatch | undefined {
  return s.ctx.storage.transactionSync(() => {
    const depth = s.store.inbox.countUnsettled();
    const lastDepth = Number(s.store.meta.get(QUEUE_DEPTH_KEY) ?? 0);
    if (depth !== lastDepth) {
      addPending(s, [["edgeclaw_queue_depth", depth - lastDepth]]);
      s.store.meta.set(QUEUE_DEPTH_KEY, String(depth));
    }
    const deltas = s.store.metrics.takeAll();
    if (!deltas.length) return undefined;
    const batch: PendingBatch = { no: Number(s.store.meta.get(BATCH_NO_KEY) ?? 0) + 1, deltas };
    s.store.meta.set(BATCH_NO_KEY, String(batch.no));
    s.store.meta.setJson(BATCH_KEY, batch);
    return batch;
  });
}
