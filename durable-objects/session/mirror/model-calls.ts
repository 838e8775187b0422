import type { ModelCallKind } from "../../../functions/agent/metering.ts";
import type { Usage } from "../../../functions/agent/types.ts";
import { TOMBSTONE_MS } from "../inbox/store.ts";
import type { MetaStore, SessionSpend } from "../meta.ts";
import type { MirrorWatermarks } from "./watermark.ts";

/**
 * The `model_calls` table (one row per attempt sent to a provider) and the session's spend: the
 * calls' rows summed, plus meta `spend:<sessionId>` for calls no longer there (folded in by the
 * sweep in the transaction that deletes them, and, for rows from before schema step 16, added with
 * each call). What /status and /usage cost show is always the rows the mirror copies to Postgres.
 * The spend was a second row written with each call (a billed row per model call). A call gets its
 * mirror stamp when it is recorded (watermark.ts, schema step 18): it is in Postgres once the stamp
 * is at most the mirror's call watermark. This file is the table's one owner.
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

/** A call the mirror has not copied yet, with the stamp it was recorded under. */
export type StampedModelCall = ModelCallRow & { mirrorStamp: number };

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
  mirror_stamp: number;
};

/** One kind's calls not yet in meta spend (`in_spend = 0`, schema step 16), summed. */
type KindSum = {
  kind: string;
  calls: number;
  usd: number;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  /** Billed ms of the calls billed by time, and how many of them (0: the kind has no ms). */
  ms: number;
  timed: number;
};

/** The `model_calls` table's one owner (and the spend:<sessionId> totals of calls swept away). */
export class ModelCallStore {
  constructor(
    private readonly sql: SqlStorage,
    private readonly meta: MetaStore,
    private readonly marks: MirrorWatermarks,
  ) {}

  /**
   * Records one call, which is its part of the session's spend (in_spend = 0: summed from the row
   * until the sweep folds it into meta). A call already recorded under its id (a resumed run
   * settling a tool's call again) adds nothing: false.
   */
  record(row: ModelCallRow): boolean {
    const inserted = this.sql.exec(
      `INSERT OR IGNORE INTO model_calls(id, run_id, session_id, kind, provider, model, channel, sender_id, input_tokens, output_tokens,
       cache_read_tokens, cache_write_tokens, cost_usd, outcome, duration_ms, at, in_spend, billed_ms, mirror_stamp) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
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
      row.billedMs ?? null,
      this.marks.nextStamp(),
    );
    return inserted.rowsWritten > 0;
  }

  /** The session's spend: meta's totals (calls swept away) plus the calls still here. */
  spend(sessionId: string): SessionSpend {
    const spend = this.meta.getJson(`spend:${sessionId}`) ?? emptySpend();
    addCalls(spend, this.unfolded(`session_id = ?`, sessionId));
    return spend;
  }

  /** The calls not yet in meta spend, per kind in the order the kinds were first used. */
  private unfolded(where: string, ...bindings: SqlStorageValue[]): KindSum[] {
    return this.sql
      .exec<KindSum>(
        `SELECT kind, COUNT(*) AS calls, SUM(cost_usd) AS usd, SUM(input_tokens) AS input,
           SUM(output_tokens) AS output, SUM(cache_read_tokens) AS cache_read,
           SUM(cache_write_tokens) AS cache_write, COALESCE(SUM(billed_ms), 0) AS ms,
           COUNT(billed_ms) AS timed
         FROM model_calls WHERE in_spend = 0 AND ${where} GROUP BY kind ORDER BY MIN(at), kind`,
        ...bindings,
      )
      .toArray();
  }

  /**
   * Calls above the mirror's watermark in stamp order: a scan of a table bounded to 48 h (no
   * index: an entry per call was a billed row, schema step 10).
   */
  unmirrored(limit: number): StampedModelCall[] {
    return this.sql
      .exec<Stored>(
        `SELECT * FROM model_calls WHERE mirror_stamp > ? ORDER BY mirror_stamp LIMIT ?`,
        this.marks.current().callStamp,
        limit,
      )
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
        mirrorStamp: row.mirror_stamp,
      }));
  }

  hasUnmirrored(): boolean {
    return (
      this.sql
        .exec(
          `SELECT 1 FROM model_calls WHERE mirror_stamp > ? LIMIT 1`,
          this.marks.current().callStamp,
        )
        .toArray().length > 0
    );
  }

  /** Model calls of one run (count and wall time feed the platform cost estimate). */
  countOfRun(runId: string): number {
    return this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM model_calls WHERE run_id = ?`, runId)
      .one().n;
  }

  /**
   * A run's answered calls of the given kinds, oldest first: what a run that this isolate did not
   * start has used so far (run/run-usage.ts). A scan of the 48 h table (no index on run_id: an entry
   * per call would be a billed row), made once per such run and isolate.
   */
  answeredOfRun(
    runId: string,
    kinds: readonly string[],
  ): Array<{ modelRef: string; usage: Usage }> {
    return this.sql
      .exec<Stored>(
        `SELECT * FROM model_calls WHERE run_id = ? AND outcome = 'ok' AND kind IN (SELECT value FROM json_each(?))
         ORDER BY at, id`,
        runId,
        JSON.stringify(kinds),
      )
      .toArray()
      .map((row) => ({
        modelRef: `${row.provider}/${row.model}`,
        usage: {
          inputTokens: row.input_tokens,
          outputTokens: row.output_tokens,
          cacheReadTokens: row.cache_read_tokens,
          cacheWriteTokens: row.cache_write_tokens,
        },
      }));
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

  /**
   * Bound: 48 h, and only once mirrored when there is a DATABASE_URL, and not while their run is
   * unfinished (`openRuns`: a run's usage is summed from its calls until its end writes the totals
   * into its row; one run per session, bounded by its rounds). The current session's calls are
   * added to its meta spend first (in the sweep's transaction, so a call is counted once: either as
   * a row or in meta); an earlier session's spend goes with its other keys.
   */
  prune(
    policy: { archived: boolean; activeSessionId: string | undefined },
    now: number,
    openRuns: readonly string[] = [],
  ): void {
    // Copied to Postgres (stamp at most the watermark), or there is no Postgres to copy to.
    const gone = `(mirror_stamp <= ? OR ? = 1) AND at < ? AND (run_id IS NULL OR run_id NOT IN (SELECT value FROM json_each(?)))`;
    const bounds = [
      this.marks.current().callStamp,
      policy.archived ? 0 : 1,
      now - TOMBSTONE_MS,
      JSON.stringify(openRuns),
    ];
    if (policy.activeSessionId) {
      const sums = this.unfolded(`session_id = ? AND ${gone}`, policy.activeSessionId, ...bounds);
      if (sums.length) {
        const key = `spend:${policy.activeSessionId}` as const;
        const spend = this.meta.getJson(key) ?? emptySpend();
        addCalls(spend, sums);
        this.meta.setJson(key, spend);
      }
    }
    this.sql.exec(`DELETE FROM model_calls WHERE ${gone}`, ...bounds);
  }
}

function addCalls(spend: SessionSpend, sums: readonly KindSum[]): void {
  for (const sum of sums) {
    const tokens = sum.input + sum.output + sum.cache_read + sum.cache_write;
    spend.calls += sum.calls;
    spend.usd += sum.usd;
    spend.inputTokens += sum.input;
    spend.outputTokens += sum.output;
    spend.cacheReadTokens += sum.cache_read;
    spend.cacheWriteTokens += sum.cache_write;
    const kind = (spend.byKind[sum.kind] ??= { calls: 0, usd: 0, tokens: 0 });
    kind.calls += sum.calls;
    kind.usd += sum.usd;
    kind.tokens += tokens;
    if (sum.timed > 0) kind.ms = (kind.ms ?? 0) + sum.ms;
  }
}
