import { DurableObject } from "cloudflare:workers";
import { seriesKey, type Delta } from "../functions/metrics/catalog.ts";
import { migrate, type SchemaMigration } from "./lib/migrate.ts";
import type { Env } from "./env.ts";
import type { MetricsShardRpc } from "./rpc.ts";
import type { BatchAnswer } from "../functions/metrics/shards.ts";

/**
 * One shard of the gateway's metrics (GET /metrics sums every shard). Why a Durable Object: isolates
 * are many and short-lived, so counters in isolate memory would be wrong the moment a second isolate
 * answered; counters here are durable and shared by all of them.
 *
 * Two kinds of writers, both off the hot path:
 *  - SessionDOs count what happens inside them (accepted, duplicate, access refusals, runs, model
 *    calls, outbox, spend, queue depth) in their own SQLite — a row update inside a write they make
 *    anyway — and hand the accumulated deltas here in numbered batches at the end of an alarm pass.
 *    `applyBatch` is idempotent per (source, batch number): a batch resent after a lost answer is
 *    applied once. One row per source remembers the last batch (pruned after SOURCE_TTL_MS idle).
 *  - Workers count what never reaches a SessionDO (refused requests, ack latency), coalesce them in
 *    memory for a moment and send them through ctx.waitUntil (functions/metrics/worker-counters.ts),
 *    so the ack never waits on this object. Those deltas are best-effort: an isolate killed inside
 *    the coalescing window loses them.
 * Sharding spreads that write load (functions/metrics/shards.ts names the shards).
 */
const SOURCE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** MetricsShardDO's tables, versioned by the shared migrator (lib/migrate.ts): append a step to change them. */
const METRICS_SHARD_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "tables of this object (created with IF NOT EXISTS before versioned migrations)",
    statements: [
      `CREATE TABLE IF NOT EXISTS series (key TEXT PRIMARY KEY, value REAL NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS sources (source TEXT PRIMARY KEY, batch INTEGER NOT NULL, at INTEGER NOT NULL)`,
    ],
  },
];

export class MetricsShardDO extends DurableObject<Env> implements MetricsShardRpc {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, { name: "MetricsShardDO", migrations: METRICS_SHARD_MIGRATIONS });
  }

  /** Worker-side deltas (no dedup). */
  async add(deltas: Delta[], maxSeries: number): Promise<void> {
    this.ctx.storage.transactionSync(() => this.apply(deltas, maxSeries));
  }

  /**
   * A SessionDO's batch; not applied when its number is at or below the last one applied for the
   * source (a resend, or a writer whose clock read earlier), and the answer says which number that is.
   */
  async applyBatch(
    source: string,
    batch: number,
    deltas: Delta[],
    maxSeries: number,
  ): Promise<BatchAnswer> {
    const answer = this.ctx.storage.transactionSync((): BatchAnswer => {
      const last = this.sql
        .exec<{ batch: number }>(`SELECT batch FROM sources WHERE source = ?`, source)
        .toArray()[0];
      if (last && last.batch >= batch) return { applied: false, last: last.batch };
      this.apply(deltas, maxSeries);
      this.sql.exec(
        `INSERT INTO sources(source, batch, at) VALUES(?, ?, ?) ON CONFLICT(source) DO UPDATE SET batch = excluded.batch, at = excluded.at`,
        source,
        batch,
        Date.now(),
      );
      return { applied: true, last: batch };
    });
    if ((await this.ctx.storage.getAlarm()) === null)
      await this.ctx.storage.setAlarm(Date.now() + SOURCE_TTL_MS);
    return answer;
  }

  async snapshot(): Promise<Array<{ key: string; value: number }>> {
    return this.sql
      .exec<{ key: string; value: number }>(`SELECT key, value FROM series`)
      .toArray()
      .map((row) => ({ key: row.key, value: row.value }));
  }

  override async alarm(): Promise<void> {
    this.sql.exec(`DELETE FROM sources WHERE at < ?`, Date.now() - SOURCE_TTL_MS);
    const oldest = this.sql
      .exec<{ at: number | null }>(`SELECT MIN(at) AS at FROM sources`)
      .toArray()[0]?.at;
    if (oldest !== null && oldest !== undefined)
      await this.ctx.storage.setAlarm(oldest + SOURCE_TTL_MS);
  }

  private apply(deltas: Delta[], maxSeries: number): void {
    let count: number | undefined;
    for (const [key, by] of deltas) {
      if (!Number.isFinite(by) || by === 0) continue;
      const updated = this.sql.exec(
        `UPDATE series SET value = value + ? WHERE key = ?`,
        by,
        key,
      ).rowsWritten;
      if (updated > 0) continue;
      count ??= this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM series`).toArray()[0]!.n;
      if (count >= maxSeries) {
        const dropped = seriesKey("edgeclaw_metrics_series_dropped_total");
        this.sql.exec(
          `INSERT INTO series(key, value) VALUES(?, 1) ON CONFLICT(key) DO UPDATE SET value = value + 1`,
          dropped,
        );
        continue;
      }
      this.sql.exec(`INSERT INTO series(key, value) VALUES(?, ?)`, key, by);
      count++;
    }
  }
}
