import type { Delta } from "../../../functions/metrics/catalog.ts";
import type { MetaStore } from "../meta.ts";

/**
 * What this object has counted since the last batch handed to the metrics shard. Counts made in an
 * alarm pass or an accept are summed in memory and reach SQLite at most once per pass: at the end
 * of the pass they go to the shard as one batch (upkeep/metrics.ts), or, when no batch is due yet,
 * into one JSON map of series → value under meta `metricsPending` (bounded by the catalogue's
 * labels). Rows written are billed: a row per count cost a plain message nine.
 *
 * The price of not writing each count: an isolate that dies between a count and the end of its
 * pass loses that pass's counts (the metrics undercount; no event, reply or money is affected),
 * and a count made in a step whose transaction then rolls back is kept. Counters that guard money
 * (budgets) or security (auth lockouts) never go through here.
 */
export class PendingMetricsStore {
  private readonly counted = new Map<string, number>();

  constructor(private readonly meta: MetaStore) {}

  add(deltas: readonly Delta[]): void {
    for (const [series, by] of deltas) {
      if (!Number.isFinite(by) || by === 0) continue;
      const value = (this.counted.get(series) ?? 0) + by;
      if (value === 0) this.counted.delete(series);
      else this.counted.set(series, value);
    }
  }

  hasAny(): boolean {
    return this.counted.size > 0 || this.meta.get("metricsPending") !== undefined;
  }

  /** Writes the counts held in memory into meta `metricsPending` (one row), for a later batch. */
  persist(): void {
    if (this.counted.size === 0) return;
    const pending = { ...this.meta.getJson("metricsPending") };
    for (const [series, by] of this.counted) {
      const value = (pending[series] ?? 0) + by;
      if (value === 0) delete pending[series];
      else pending[series] = value;
    }
    this.counted.clear();
    if (Object.keys(pending).length) this.meta.setJson("metricsPending", pending);
    else this.meta.delete("metricsPending");
  }

  /** Every pending delta (stored and in memory), removed from both. */
  takeAll(): Delta[] {
    const pending: Record<string, number> = { ...this.meta.getJson("metricsPending") };
    if (this.meta.get("metricsPending") !== undefined) this.meta.delete("metricsPending");
    for (const [series, by] of this.counted) pending[series] = (pending[series] ?? 0) + by;
    this.counted.clear();
    return Object.entries(pending).filter(([, value]) => value !== 0);
  }
}
