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
 * This session's counters (their pending map: metrics-store.ts). Counting costs no network and no
 * row: counts are summed in memory. At the end of an alarm pass (and at most every
 * diagnostics.metrics.flushIntervalMs) the accumulated deltas go to the session's metrics shard as
 * one numbered batch, and one row records it (meta `metricsFlushed`: its number and time). The
 * shard applies each (source, number) once and drops a number at or below the last it applied
 * (durable-objects/metrics-shard.ts), so numbers only grow: the flush time in ms, or one past the
 * last recorded, whichever is higher — an isolate that died after the shard applied a batch but
 * before the row was written still numbers its next batch above it. A send that fails (its outcome
 * unknown) stores the batch under meta `metricsBatch`, and it goes again unchanged until the shard
 * answers. Counts made when no batch is due wait in meta `metricsPending`.
 */

const BATCH_KEY = "metricsBatch" as const;
const FLUSHED_KEY = "metricsFlushed" as const;
const QUEUE_DEPTH_KEY = "metricsQueueDepth" as const;

interface PendingBatch {
  no: number;
  deltas: Delta[];
  /** When it was first sent (epoch ms). */
  at?: number;
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
  const unacked = s.store.meta.getJson(BATCH_KEY);
  if (!hasPending(s) && unacked === undefined) return undefined;
  const flushedAt = Math.max(s.store.meta.getJson(FLUSHED_KEY)?.at ?? 0, unacked?.at ?? 0);
  return Math.max(now, flushedAt + s.config.diagnostics.metrics.flushIntervalMs);
}

function hasPending(s: SessionState): boolean {
  return s.store.metrics.hasAny();
}

/**
 * Sends the pending counters (or the batch still unacknowledged) to this session's shard; when no
 * batch is due, keeps what this pass counted in meta `metricsPending`. Never throws.
 */
export async function flushSessionMetrics(s: SessionState, now = Date.now()): Promise<void> {
  const due = metricsFlushDueAt(s, now);
  if (due === undefined) return;
  if (due > now) return s.store.metrics.persist();
  const unacked = s.store.meta.getJson(BATCH_KEY);
  const batch = unacked ?? takeBatch(s, now);
  if (!batch) return;
  try {
    const source = s.ctx.id.toString();
    await metricsShard(s.env.METRICS, source).applyBatch(
      source,
      batch.no,
      batch.deltas,
      s.config.diagnostics.metrics.maxSeries,
    );
    s.ctx.storage.transactionSync(() => {
      if (unacked) s.store.meta.delete(BATCH_KEY);
      s.store.meta.setJson(FLUSHED_KEY, { no: batch.no, at: now });
    });
  } catch {
    // The shard is unreachable or its answer was lost: the same batch goes again on a later pass
    // (metricsFlushDueAt keeps it due), and the counts made meanwhile wait in metricsPending.
    if (!unacked) s.store.meta.setJson(BATCH_KEY, batch);
  }
}

/** The pending deltas (plus the queue-depth change since the last batch) as the next numbered batch. */
function takeBatch(s: SessionState, now: number): PendingBatch | undefined {
  const depth = s.store.inbox.countUnsettled();
  const lastDepth = Number(s.store.meta.get(QUEUE_DEPTH_KEY) ?? 0);
  if (depth !== lastDepth) {
    addPending(s, [["edgeclaw_queue_depth", depth - lastDepth]]);
    s.store.meta.set(QUEUE_DEPTH_KEY, String(depth));
  }
  const deltas = s.store.metrics.takeAll();
  if (!deltas.length) return undefined;
  const last = s.store.meta.getJson(FLUSHED_KEY)?.no ?? 0;
  return { no: Math.max(now, last + 1), deltas, at: now };
}
