import type { Delta } from "../../../functions/metrics/catalog.ts";

/**
 * The `metrics_pending` table's one owner: one row per series this object has counted (bounded by
 * the catalogue's labels), holding what was counted since the last batch handed to the metrics
 * shard. A batch zeroes the rows instead of deleting them, so the next count of a series updates
 * its row (one row written) instead of inserting it again with its primary-key entry and deleting
 * both at the next batch; the retention sweep drops rows still at zero.
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
    return (
      this.sql.exec(`SELECT 1 FROM metrics_pending WHERE value != 0 LIMIT 1`).toArray().length > 0
    );
  }
  /** Every pending delta, removed from the table (the caller's transaction keeps it one step). */
  takeAll(): Delta[] {
    const deltas = this.sql
      .exec<{ series: string; value: number }>(
        `SELECT series, value FROM metrics_pending WHERE value != 0`,
      )
      .toArray()
      .map((row): Delta => [row.series, row.value]);
    if (deltas.length) this.sql.exec(`UPDATE metrics_pending SET value = 0 WHERE value != 0`);
    return deltas;
  }

  /** Bound: rows of series not counted since the last batch go (at most hourly, with the sweep). */
  prune(): void {
    this.sql.exec(`DELETE FROM metrics_pending WHERE value = 0`);
  }
}
