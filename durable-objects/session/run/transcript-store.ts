import type { Message } from "../../../functions/agent/types.ts";
import type { MetaStore } from "../meta.ts";
import type { MirrorWatermarks } from "../mirror/watermark.ts";
import { toTranscriptRow, type Row, type TranscriptRow } from "../storage-rows.ts";

/**
 * The `transcript` table's one owner: the model's context (bounded by compaction) and the rows
 * awaiting the Postgres mirror. What the mirror has copied is one watermark (schema step 10; the
 * transcript's part of meta `mirrorWatermark` from step 18, mirror/watermark.ts): every row up to
 * it. Seqs only grow (schema step 14), so a row written later is always above it.
 */
export class TranscriptStore {
  constructor(
    private readonly sql: SqlStorage,
    private readonly meta: MetaStore,
    private readonly marks: MirrorWatermarks,
  ) {}

  private mirroredSeq(): number {
    return this.marks.current().transcriptSeq;
  }

  /**
   * Every row of the current session is above this seq (meta transcriptSessionFloor, written when
   * a session starts): its reads walk the key's range from there instead of an index on
   * (session_id, seq), whose entry was a billed row per transcript row (schema step 17). Another
   * session's rows are read from 0 (a scan: only /export-like reads of an earlier session).
   */
  private floorOf(sessionId: string): number {
    return this.meta.get("sessionId") === sessionId
      ? Number(this.meta.get("transcriptSessionFloor") ?? 0)
      : 0;
  }

  /** A new session starts: its rows will all be above every seq given so far. */
  startSession(): void {
    const given = Math.max(this.newestSeq(), Number(this.meta.get("transcriptSeqFloor") ?? 0));
    if (given > 0 || this.meta.get("transcriptSessionFloor") !== undefined)
      this.meta.set("transcriptSessionFloor", String(given));
  }

  append(sessionId: string, runId: string | null, message: Message, now: number): number {
    // The seq above every one given before (schema step 14: no AUTOINCREMENT, whose sequence row
    // was a billed write per insert), so the mirror's watermark never covers a new row.
    return this.sql
      .exec<{ seq: number }>(
        `INSERT INTO transcript(seq, session_id, run_id, role, message, created_at)
           VALUES((SELECT MAX(COALESCE(MAX(seq), 0), CAST(? AS INTEGER)) + 1 FROM transcript), ?, ?, ?, ?, ?) RETURNING seq`,
        Number(this.meta.get("transcriptSeqFloor") ?? 0),
        sessionId,
        runId,
        message.role,
        JSON.stringify(message),
        now,
      )
      .one().seq;
  }
  /** Rewrites one row's message in place (an image's description added to its media part). */
  replaceMessage(seq: number, message: Message): void {
    this.sql.exec(`UPDATE transcript SET message = ? WHERE seq = ?`, JSON.stringify(message), seq);
  }
  recent(sessionId: string, limit = 10_000): TranscriptRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM (SELECT * FROM transcript WHERE seq > ? AND session_id = ? AND compacted = 0 ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
        this.floorOf(sessionId),
        sessionId,
        limit,
      )
      .toArray()
      .map(toTranscriptRow);
  }
  /** Every row of one session, compacted ones included, oldest first (at most `limit`). */
  ofSession(sessionId: string, limit = 10_000): TranscriptRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM transcript WHERE seq > ? AND session_id = ? ORDER BY seq LIMIT ?`,
        this.floorOf(sessionId),
        sessionId,
        limit,
      )
      .toArray()
      .map(toTranscriptRow);
  }
  ofRun(runId: string): TranscriptRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM transcript WHERE run_id = ? ORDER BY seq`, runId)
      .toArray()
      .map(toTranscriptRow);
  }
  /** Hides everything before `keepFromSeq` from the model; the rows stay for the Postgres archive. */
  markCompacted(sessionId: string, keepFromSeq: number): number {
    return this.sql.exec(
      `UPDATE transcript SET compacted = 1 WHERE seq > ? AND seq < ? AND session_id = ? AND compacted = 0`,
      this.floorOf(sessionId),
      keepFromSeq,
      sessionId,
    ).rowsWritten;
  }
  unmirrored(limit: number): TranscriptRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM transcript WHERE seq > ? ORDER BY seq LIMIT ?`,
        this.mirroredSeq(),
        limit,
      )
      .toArray()
      .map(toTranscriptRow);
  }
  /** Every row up to `upToSeq` is in Postgres (the mirror raises all its watermarks in one write). */
  markMirrored(upToSeq: number): void {
    this.marks.advance({ transcriptSeq: upToSeq });
  }

  hasUnmirrored(): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM transcript WHERE seq > ? LIMIT 1`, this.mirroredSeq()).toArray()
        .length > 0
    );
  }

  /**
   * Bound: compacted rows and earlier sessions' rows go once mirrored (`archived`), or, without
   * Postgres, `archiveMs` after they were written (never, when false).
   */
  prune(
    policy: { activeSessionId: string | undefined; archived: boolean; archiveMs: number | false },
    now: number,
  ): void {
    const active = policy.activeSessionId ?? "";
    const newest = this.newestSeq();
    this.deleteArchived(policy, active, now);
    // The newest row went too (an earlier session's, all archived): its seq stays taken.
    if (newest > this.newestSeq()) this.meta.set("transcriptSeqFloor", String(newest));
  }
  private newestSeq(): number {
    return (
      this.sql.exec<{ seq: number | null }>(`SELECT MAX(seq) AS seq FROM transcript`).one().seq ?? 0
    );
  }
  private deleteArchived(
    policy: { archived: boolean; archiveMs: number | false },
    active: string,
    now: number,
  ): void {
    if (policy.archived) {
      this.sql.exec(
        `DELETE FROM transcript WHERE seq <= ? AND (compacted = 1 OR session_id != ?)`,
        this.mirroredSeq(),
        active,
      );
    } else if (policy.archiveMs !== false) {
      this.sql.exec(
        `DELETE FROM transcript WHERE (compacted = 1 OR session_id != ?) AND created_at < ?`,
        active,
        now - policy.archiveMs,
      );
    }
  }
  /** Without Postgres: when prune next has an archive-retention expiry. */
  pruneDueAt(policy: {
    activeSessionId: string | undefined;
    archived: boolean;
    archiveMs: number | false;
  }): number | undefined {
    if (policy.archived || policy.archiveMs === false) return undefined;
    const at = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(created_at) AS at FROM transcript WHERE compacted = 1 OR session_id != ?`,
        policy.activeSessionId ?? "",
      )
      .one().at;
    return at === null ? undefined : at + policy.archiveMs;
  }
}
