import type { Delta } from "../../../functions/metrics/catalog.ts";
import type { MetaStore } from "../meta.ts";

/**
 * What this object has counted since the last batch handed to the metrics shard: one JSON map of
 * series → value under meta `metricsPending` (bounded by the catalogue's labels). One count — a
 * counter, or a histogram observation's bucket, sum and count series together — is one row
 * written, where a row per series cost a histogram a dozen (rows written are billed). Read from
 * SQLite on every count, never cached in memory: a step whose transaction rolls back takes its
 * counts with it.
 */
export class PendingMetricsStore {
  constructor(private readonly meta: MetaStore) {}

  add(deltas: readonly Delta[]): void {
    const counted = deltas.filter(([, by]) => Number.isFinite(by) && by !== 0);
    if (counted.length === 0) return;
    const pending = { ...this.meta.getJson("metricsPending") };
    for (const [series, by] of counted) {
      const value = (pending[series] ?? 0) + by;
      if (value === 0) delete pending[series];
      else pending[series] = value;
    }
    if (Object.keys(pending).length) this.meta.setJson("metricsPending", pending);
    else this.meta.delete("metricsPending");
  }

  hasAny(): boolean {
    return this.meta.get("metricsPending") !== undefined;
  }

  /** Every pending delta, removed from storage (the caller's transaction keeps it one step). */
  takeAll(): Delta[] {
    const pending = this.meta.getJson("metricsPending");
    if (!pending) return [];
    this.meta.delete("metricsPending");
    return Object.entries(pending);
  }
}
