import type { ModelCallKind } from "../../../functions/agent/metering.ts";
import type { Usage } from "../../../functions/agent/types.ts";
import { TOMBSTONE_MS } from "../inbox/store.ts";
import type { MetaStore, SessionSpend } from "../meta.ts";

/**
 * The `model_calls` table (one row per attempt sent to a provider) and the session's running spend
 * in meta `spend:<sessionId>`, both written in one transaction, so what /status and /usage cost show
 * always matches the rows the mirror copies to Postgres. This file is the table's one owner.
 */

export interface ModelCallRow {
  id: string;
  runId: string | null;
  sessionId: string;
  kind: ModelCallKind;
  provider: string;
  model: string;
  channel: string | null;
  senderId: string | null;
  usage: Usage;
  costUsd: number;
  outcome: "ok" | "error";
  durationMs: number;
  at: number;
  /** A call billed by time (the browser): its billed ms, summed per kind in the spend. */
  billedMs?: number;
}

export function emptySpend(): SessionSpend {
  return {
    calls: 0,
    usd: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    byKind: {},
  };
}

type Stored = {
  id: string;
  run_id: string | null;
  session_id: string;
  kind: string;
  provider: string;
  model: string;
  channel: string | null;
  sender_id: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  outcome: string;
  duration_ms: number;
  at: number;
};

/** The `model_calls` table's one owner (and the spend:<sessionId> totals written with each row). */
export class ModelCallStore {
  constructor(
    private readonly sql: SqlStorage,
    private readonly meta: MetaStore,
  ) {}

  /**
   * Records one call and adds it to its session's spend (the caller's transaction makes both one
   * step). A call already recorded under its id (a resumed run settling a tool's call again) adds
   * nothing: false.
   */
  record(row: ModelCallRow): boolean {
    const inserted = this.sql.exec(
      `INSERT OR IGNORE INTO model_calls(id, run_id, session_id, kind, provider, model, channel, sender_id, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, cost_usd, outcome, duration_ms, at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.runId,
      row.sessionId,
      row.kind,
      row.provider,
      row.model,
      row.channel,
      row.senderId,
      row.usage.inputTokens,
      row.usage.outputTokens,
      row.usage.cacheReadTokens,
      row.usage.cacheWriteTokens,
      row.costUsd,
      row.outcome,
      row.durationMs,
      row.at,
    );
    if (inserted.rowsWritten === 0) return false;
    const spend = this.spend(row.sessionId);
    const tokens =
      row.usage.inputTokens +
      row.usage.outputTokens +
      row.usage.cacheReadTokens +
      row.usage.cacheWriteTokens;
    spend.calls += 1;
    spend.usd += row.costUsd;
    spend.inputTokens += row.usage.inputTokens;
    spend.outputTokens += row.usage.outputTokens;
    spend.cacheReadTokens += row.usage.cacheReadTokens;
    spend.cacheWriteTokens += row.usage.cacheWriteTokens;
    const kind = (spend.byKind[row.kind] ??= { calls: 0, usd: 0, tokens: 0 });
    kind.calls += 1;
    kind.usd += row.costUsd;
    kind.tokens += tokens;
    if (row.billedMs !== undefined) kind.ms = (kind.ms ?? 0) + row.billedMs;
    this.meta.setJson(`spend:${row.sessionId}`, spend);
    return true;
  }

  spend(sessionId: string): SessionSpend {
    return this.meta.getJson(`spend:${sessionId}`) ?? emptySpend();
  }

  /** A scan of a table bounded to 48 h (no index: an entry per call was a billed row, schema step 10). */
  unmirrored(limit: number): ModelCallRow[] {
    return this.sql
      .exec<Stored>(`SELECT * FROM model_calls WHERE mirrored = 0 ORDER BY at LIMIT ?`, limit)
      .toArray()
      .map((row) => ({
        id: row.id,
        runId: row.run_id,
        sessionId: row.session_id,
        kind: row.kind,
        provider: row.provider,
        model: row.model,
        channel: row.channel,
        senderId: row.sender_id,
        usage: {
          inputTokens: row.input_tokens,
          outputTokens: row.output_tokens,
          cacheReadTokens: row.cache_read_tokens,
          cacheWriteTokens: row.cache_write_tokens,
        },
        costUsd: row.cost_usd,
        outcome: row.outcome === "error" ? "error" : "ok",
        durationMs: row.duration_ms,
        at: row.at,
      }));
  }

  hasUnmirrored(): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM model_calls WHERE mirrored = 0 LIMIT 1`).toArray().length > 0
    );
  }

  markMirrored(ids: string[]): void {
    for (const id of ids) this.sql.exec(`UPDATE model_calls SET mirrored = 1 WHERE id = ?`, id);
  }

  /** Model calls of one run (count and wall time feed the platform cost estimate). */
  countOfRun(runId: string): number {
    return this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM model_calls WHERE run_id = ?`, runId)
      .one().n;
  }

  /** What a run's model calls cost so far (for the `/usage full` footer). */
  costOfRun(runId: string): number {
    return (
      this.sql
        .exec<{ usd: number | null }>(
          `SELECT SUM(cost_usd) AS usd FROM model_calls WHERE run_id = ?`,
          runId,
        )
        .one().usd ?? 0
    );
  }

  /** Bound: 48 h, and only once mirrored when there is a DATABASE_URL (totals: meta spend:<id>). */
  prune(policy: { archived: boolean }, now: number): void {
    this.sql.exec(
      `DELETE FROM model_calls WHERE (mirrored = 1 OR ? = 1) AND at < ?`,
      policy.archived ? 0 : 1,
      now - TOMBSTONE_MS,
    );
  }
}
