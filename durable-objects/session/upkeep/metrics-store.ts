import type { Delta } from "../../../functions/metrics/catalog.ts";

/**
 * The `metrics_pending` table's one owner: one row per series counted since the last batch handed
 * to the metrics shard (bounded by the catalogue's labels).
 */
export class PendingMetricsStore {
  constructor(private readonly sql: SqlStorage) {}

  add(deltas: readonly Delta[]): void {
    for (const [series, by] of deltas) {
      if (!Number.isFinite(by) || by === 0) continue;
      this.sql.exec(
        `INSERT INTO metrics_pending(series, value) VALUES(?, ?) ON CONFLICT(series) DO UPDATE SET value = value + excluded.value`,
        series,
        by,
      );
    }
  }
  hasAny(): boolean {
    return this.sql.exec(`SELECT 1 FROM metrics_pending LIMIT 1`).toArray().length > 0;
  }
  /** Every pending delta, removed from the table (the caller's transaction keeps it one step). */
  takeAll(): Delta[] {
    const deltas = this.sql
      .exec<{ series: string; value: number }>(`SELECT series, value FROM metrics_pending`)
      .toArray()
      .map((row): Delta => [row.series, row.value]);
    if (deltas.length) this.sql.exec(`DELETE FROM metrics_pending`);
    return deltas;
  }
}
