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
 * one numbered batch. The shard applies each (source, number) once and refuses a number at or
 * below the last it applied (durable-objects/metrics-shard.ts), so numbers only grow: the flush
 * time in ms, or one past the last batch this isolate sent, whichever is higher. What was sent last
 * is kept in memory only (SessionState.metricsFlushed), not in a row per flush: a new isolate
 * numbers by its clock, and should that read at or below a batch an earlier isolate sent, the
 * shard's answer names its last number and the same counts go once more above it. A send that
 * fails (its outcome unknown) stores the batch under meta `metricsBatch`, and it goes again
 * unchanged until the shard answers. Counts made when no batch is due wait in meta
 * `metricsPending`. (Meta `metricsFlushed`, written per flush before schema step 14, is still read
 * as a floor for the number and the interval.)
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
  const flushedAt = Math.max(lastFlushed(s).at, unacked?.at ?? 0);
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
  let batch = unacked ?? takeBatch(s, now);
  if (!batch) return;
  try {
    const source = s.ctx.id.toString();
    const shard = metricsShard(s.env.METRICS, source);
    const send = (sent: PendingBatch) =>
      shard.applyBatch(source, sent.no, sent.deltas, s.config.diagnostics.metrics.maxSeries);
    const answer = await send(batch);
    // Fresh counts under a stale number (this isolate's clock read at or below a batch an earlier
    // one sent): not applied, so they go again above the shard's last. A resend that is refused
    // was applied before.
    if (!unacked && !answer.applied) {
      batch = { ...batch, no: answer.last + 1 };
      await send(batch);
    }
    if (unacked) s.store.meta.delete(BATCH_KEY);
    s.metricsFlushed = { no: batch.no, at: now };
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
  return { no: Math.max(now, lastFlushed(s).no + 1), deltas, at: now };
}

/** The last batch sent and when: this isolate's, or the row of schema steps 10–13 (a floor). */
function lastFlushed(s: SessionState): { no: number; at: number } {
  const stored = s.store.meta.getJson(FLUSHED_KEY);
  return {
    no: Math.max(s.metricsFlushed?.no ?? 0, stored?.no ?? 0),
    at: Math.max(s.metricsFlushed?.at ?? 0, stored?.at ?? 0),
  };
}
