import { TOMBSTONE_MS } from "../inbox/store.ts";
import type { MetaStore } from "../meta.ts";
import type { MirrorWatermarks } from "../mirror/watermark.ts";
import type { ModelCallStore } from "../mirror/model-calls.ts";
import { toRunRow, type Row, type RunRow, type RunState } from "../storage-rows.ts";
import { isUnfinished, RunUsageTally } from "./run-usage.ts";

/** A finished run the mirror has not copied yet, with the stamp it was given when it finished. */
export type StampedRun = RunRow & { mirrorStamp: number };

/** A run in one of these states is not finished: the mirror copies it only once it is. */
const UNFINISHED = `state IN ('running', 'waiting')`;

/**
 * The `runs` table's one owner (a run's state, route, usage and progress state). A run gets its
 * mirror stamp when it finishes (mirror/watermark.ts, schema step 18): it is in Postgres once the
 * stamp is at most the mirror's run watermark, and only then may the sweep drop or fold it. Its
 * end also carries the mirror's watermark as it then was (mirror_mark, schema step 20), so a
 * mirror pass need not write one. A run's
 * usage is written into its row once, with its end; until then every read gives it from
 * run-usage.ts.
 */
export class RunStore {
  private readonly usage: RunUsageTally;

  constructor(
    private readonly sql: SqlStorage,
    /** Folded totals live in meta foldedRuns:<sessionId>. */
    private readonly meta: MetaStore,
    private readonly marks: MirrorWatermarks,
    modelCalls: ModelCallStore,
  ) {
    this.usage = new RunUsageTally(modelCalls);
  }

  insert(
    run: Omit<
      RunRow,
      | "steps"
      | "inputTokens"
      | "outputTokens"
      | "cacheReadTokens"
      | "cacheWriteTokens"
      | "finishedAt"
      | "resumes"
    >,
  ): void {
    this.sql.exec(
      `INSERT INTO runs(run_id, session_id, state, route, model_ref, progress_state, options,
         started_at, mirror_stamp, mirror_mark) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      run.runId,
      run.sessionId,
      run.state,
      JSON.stringify(run.route),
      run.modelRef,
      JSON.stringify(run.progressState),
      JSON.stringify(run.options),
      run.startedAt,
      // A run recorded already ended is worth copying at once; a running one once it finishes.
      ...(run.state === "running" || run.state === "waiting"
        ? [null, null]
        : [this.marks.nextStamp(), this.marks.carried()]),
    );
    this.usage.started(run.runId);
  }
  active(): RunRow | undefined {
    const row = this.sql
      .exec<Row>(`SELECT * FROM runs WHERE state = 'running' ORDER BY started_at LIMIT 1`)
      .toArray()[0];
    return row ? this.withUsage(toRunRow(row)) : undefined;
  }
  /** The newest run that answered on this channel and chat (the message tool's owner check). */
  latestOn(channel: string, to: string): RunRow | undefined {
    const row = this.sql
      .exec<Row>(
        `SELECT * FROM runs WHERE json_extract(route, '$.channel') = ? AND json_extract(route, '$.to') = ? ORDER BY started_at DESC LIMIT 1`,
        channel,
        to,
      )
      .toArray()[0];
    return row ? this.withUsage(toRunRow(row)) : undefined;
  }
  get(runId: string): RunRow | undefined {
    const row = this.stored(runId);
    return row ? this.withUsage(row) : undefined;
  }
  private stored(runId: string): RunRow | undefined {
    const row = this.sql.exec<Row>(`SELECT * FROM runs WHERE run_id = ?`, runId).toArray()[0];
    return row ? toRunRow(row) : undefined;
  }
  /** An unfinished run's row with its usage so far (its row holds it only from its end). */
  private withUsage(row: RunRow): RunRow {
    return isUnfinished(row) ? { ...row, ...this.usage.of(row) } : row;
  }
  /**
   * One model round of the run's loop (execute.ts, memory-flush.ts): counted in memory, no row
   * written (the call's model_calls row is its durable record; see run-usage.ts).
   */
  addUsage(
    runId: string,
    modelRef: string,
    usage: {
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
    },
  ): void {
    const row = this.stored(runId);
    if (row && isUnfinished(row)) this.usage.add(row, modelRef, usage);
  }
  /** Counts one more restart of the run; returns the new count. */
  addResume(runId: string): number {
    const row = this.sql
      .exec<{ resumes: number }>(
        `UPDATE runs SET resumes = resumes + 1 WHERE run_id = ? RETURNING resumes`,
        runId,
      )
      .toArray()[0];
    return row?.resumes ?? 0;
  }
  /** Writes only a change: most progress events (typing, a held delta) leave the state as it was. */
  setProgress(runId: string, state: Record<string, string>): void {
    const json = JSON.stringify(state);
    this.sql.exec(
      `UPDATE runs SET progress_state = ? WHERE run_id = ? AND progress_state != ?`,
      json,
      runId,
      json,
    );
  }
  /** Runs waiting for the caller's function call results (/v1/responses), oldest first. */
  waiting(): RunRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM runs WHERE state = 'waiting' ORDER BY started_at`)
      .toArray()
      .map((row) => this.withUsage(toRunRow(row)));
  }
  /** The runs not ended yet (their model calls are kept until they end: model-calls.ts prune). */
  unfinishedIds(): string[] {
    return this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM runs WHERE ${UNFINISHED}`)
      .toArray()
      .map((row) => row.run_id);
  }
  /** Moves a run between running and waiting with its options (the wait's deadline, time waited). */
  setWaitState(runId: string, state: "running" | "waiting", options: RunRow["options"]): void {
    this.sql.exec(
      `UPDATE runs SET state = ?, options = ? WHERE run_id = ?`,
      state,
      JSON.stringify(options),
      runId,
    );
  }
  /**
   * The run's end, with its estimated platform cost (schema step 12: the session's platform total is
   * summed from its runs instead of a second write of meta spend), its mirror stamp (the run is now
   * worth copying to Postgres) and its usage (run-usage.ts) in the same row: the one write of a
   * run's totals.
   */
  finish(
    runId: string,
    state: RunState,
    now: number,
    platformUsd: number,
    /** The reply its taken events settle with, when its end settles them (settled-by-run.ts). */
    settles?: { reply: string | null },
  ): void {
    const eventsReply = settles ? JSON.stringify(settles.reply) : null;
    const row = this.stored(runId);
    if (!row || !isUnfinished(row)) {
      this.sql.exec(
        `UPDATE runs SET state = ?, finished_at = ?, platform_usd = ?, mirror_stamp = ?,
           mirror_mark = ?, events_reply = ? WHERE run_id = ?`,
        state,
        now,
        platformUsd,
        this.marks.nextStamp(),
        this.marks.carried(),
        eventsReply,
        runId,
      );
      return;
    }
    const used = this.usage.of(row);
    this.sql.exec(
      `UPDATE runs SET state = ?, finished_at = ?, platform_usd = ?, mirror_stamp = ?,
         mirror_mark = ?, events_reply = ?, steps = ?, model_ref = ?, input_tokens = ?,
         output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ? WHERE run_id = ?`,
      state,
      now,
      platformUsd,
      this.marks.nextStamp(),
      this.marks.carried(),
      eventsReply,
      used.steps,
      used.modelRef,
      used.inputTokens,
      used.outputTokens,
      used.cacheReadTokens,
      used.cacheWriteTokens,
      runId,
    );
    // A rollback of the end's transaction leaves the run unfinished: it is summed again when asked.
    this.usage.ended(runId);
  }
  /** The estimated platform cost of a session's finished runs, folded ones included. */
  platformUsd(sessionId: string): number {
    const live = this.sql
      .exec<{ usd: number | null }>(
        `SELECT SUM(platform_usd) AS usd FROM runs WHERE session_id = ?`,
        sessionId,
      )
      .one().usd;
    return (live ?? 0) + (this.meta.getJson(`foldedRuns:${sessionId}`)?.platformUsd ?? 0);
  }
  /** The agent has replied in this session at least once (thread participation). */
  hasAnswered(): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM runs WHERE state = 'finished' LIMIT 1`).toArray().length > 0
    );
  }
  /**
   * Finished runs above the mirror's watermark, in stamp order (a scan of a bounded table: an
   * index entry would be a billed row per run). The pass raises the watermark to the last one's.
   */
  unmirrored(limit: number): StampedRun[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM runs WHERE NOT ${UNFINISHED} AND mirror_stamp > ? ORDER BY mirror_stamp LIMIT ?`,
        this.marks.current().runStamp,
        limit,
      )
      .toArray()
      .map((row) => ({ ...toRunRow(row), mirrorStamp: Number(row.mirror_stamp) }));
  }
  hasUnmirrored(): boolean {
    return (
      this.sql
        .exec(
          `SELECT 1 FROM runs WHERE NOT ${UNFINISHED} AND mirror_stamp > ? LIMIT 1`,
          this.marks.current().runStamp,
        )
        .toArray().length > 0
    );
  }
  sessionTotals(sessionId: string): { inputTokens: number; outputTokens: number; runs: number } {
    const row = this.sql
      .exec<{ i: number | null; o: number | null; n: number }>(
        `SELECT SUM(input_tokens) AS i, SUM(output_tokens) AS o, COUNT(*) AS n FROM runs
         WHERE session_id = ? AND NOT ${UNFINISHED}`,
        sessionId,
      )
      .one();
    // A run in progress counts what it has used so far (its row gets it at its end).
    const open = this.sql
      .exec<Row>(`SELECT * FROM runs WHERE session_id = ? AND ${UNFINISHED}`, sessionId)
      .toArray()
      .map((open) => this.withUsage(toRunRow(open)));
    // Runs folded away by the retention sweep (prune below) still count.
    const folded = this.meta.getJson(`foldedRuns:${sessionId}`);
    const sum = (pick: (run: RunRow) => number) =>
      open.reduce((total, run) => total + pick(run), 0);
    return {
      inputTokens: (row.i ?? 0) + sum((run) => run.inputTokens) + (folded?.inputTokens ?? 0),
      outputTokens: (row.o ?? 0) + sum((run) => run.outputTokens) + (folded?.outputTokens ?? 0),
      runs: row.n + open.length + (folded?.runs ?? 0),
    };
  }

  /**
   * Bound: the current session's newest `maxEntries` runs (older finished ones, archived and with
   * no chunk in delivery, are summed into foldedRuns:<sessionId>) and earlier sessions' runs for
   * TOMBSTONE_MS after they finish, once mirrored (at once without Postgres): once their stamp is
   * at most the mirror's run watermark, so a run finished after the last pass stays.
   */
  prune(
    policy: { activeSessionId: string | undefined; archived: boolean; maxEntries: number },
    now: number,
    runsInDelivery: readonly string[],
    /** Called with the runs about to be deleted: their events' state is read from their rows. */
    beforeDelete: (runIds: string[]) => void,
  ): void {
    // Copied to Postgres (stamp at most the watermark), or there is no Postgres to copy to.
    const gone = `(mirror_stamp <= ? OR ? = 1) AND NOT ${UNFINISHED}`;
    const bounds = [this.marks.current().runStamp, policy.archived ? 0 : 1];
    const expired = `${gone} AND session_id != ? AND finished_at < ?`;
    const expiredBounds = [...bounds, policy.activeSessionId ?? "", now - TOMBSTONE_MS];
    const ids = this.sql
      .exec<{ run_id: string }>(`SELECT run_id FROM runs WHERE ${expired}`, ...expiredBounds)
      .toArray()
      .map((run) => run.run_id);
    if (ids.length) {
      beforeDelete(ids);
      this.sql.exec(`DELETE FROM runs WHERE ${expired}`, ...expiredBounds);
    }
    if (policy.activeSessionId)
      this.foldOld(
        policy.activeSessionId,
        policy.maxEntries,
        gone,
        bounds,
        runsInDelivery,
        beforeDelete,
      );
  }

  private foldOld(
    sessionId: string,
    maxEntries: number,
    gone: string,
    bounds: readonly number[],
    runsInDelivery: readonly string[],
    beforeDelete: (runIds: string[]) => void,
  ): void {
    const inDelivery = new Set(runsInDelivery);
    const old = this.sql
      .exec<{ run_id: string; input_tokens: number; output_tokens: number; platform_usd: number }>(
        `SELECT run_id, input_tokens, output_tokens, platform_usd FROM runs
         WHERE session_id = ? AND ${gone}
           AND run_id NOT IN (SELECT run_id FROM runs WHERE session_id = ? ORDER BY started_at DESC, run_id DESC LIMIT ?)`,
        sessionId,
        ...bounds,
        sessionId,
        maxEntries,
      )
      .toArray()
      .filter((run) => !inDelivery.has(run.run_id));
    if (!old.length) return;
    beforeDelete(old.map((run) => run.run_id));
    const key = `foldedRuns:${sessionId}` as const;
    const totals = this.meta.getJson(key) ?? { inputTokens: 0, outputTokens: 0, runs: 0 };
    for (const run of old) {
      totals.inputTokens += run.input_tokens;
      totals.outputTokens += run.output_tokens;
      totals.runs += 1;
      totals.platformUsd = (totals.platformUsd ?? 0) + run.platform_usd;
      this.sql.exec(`DELETE FROM runs WHERE run_id = ?`, run.run_id);
    }
    this.meta.setJson(key, totals);
  }
}
