import type { Message } from "../../functions/agent/types.ts";
import type { RoutedEvent } from "../session-api.ts";
import { migrateSessionSchema, type SchemaHost } from "./schema.ts";
import type { FoldedRuns } from "./upkeep/retention.ts";
import { toInboxRow, toOutboxRow, toRunRow, toTranscriptRow, type Row } from "./storage-rows.ts";
import type {
  InboxRow,
  InboxState,
  OutboxRow,
  OutboxState,
  PreparedMessage,
  RunRow,
  RunState,
  TranscriptRow,
} from "./storage-rows.ts";

/** The largest string or BLOB a Durable Object's SQLite stores (Cloudflare's documented limit: 2 MB). */
export const MAX_STORED_VALUE_BYTES = 2_000_000;

export type {
  InboxRow,
  InboxState,
  OutboxRow,
  OutboxState,
  PreparedMessage,
  RunOptions,
  RunRow,
  RunState,
  TranscriptRow,
} from "./storage-rows.ts";

/** Dedup tombstones are kept this long after an event settles (platform retry windows are ≤ 24 h). */
export const TOMBSTONE_MS = 48 * 60 * 60 * 1000;

export class SessionStore {
  private readonly sql: SqlStorage;

  /**
   * Brings the object's tables up to the current schema first (see schema.ts). Pass the whole
   * storage so the migration runs in one transaction; a bare SqlStorage is for objects the
   * SessionDO constructor has already migrated (tests reading a live object).
   */
  constructor(storage: SqlStorage | SchemaHost) {
    const host: SchemaHost =
      "sql" in storage ? storage : { sql: storage, transactionSync: (work) => work() };
    this.sql = host.sql;
    migrateSessionSchema(host);
  }

  // ---- meta --------------------------------------------------------------------------------
  getMeta(key: string): string | undefined {
    const row = this.sql
      .exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key)
      .toArray()[0];
    return row?.value;
  }
  setMeta(key: string, value: string): void {
    this.sql.exec(
      `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      key,
      value,
    );
  }
  deleteMeta(key: string): void {
    this.sql.exec(`DELETE FROM meta WHERE key = ?`, key);
  }
  getJson<T>(key: string): T | undefined {
    const raw = this.getMeta(key);
    return raw === undefined ? undefined : (JSON.parse(raw) as T);
  }
  setJson(key: string, value: unknown): void {
    this.setMeta(key, JSON.stringify(value));
  }

  // ---- inbox -------------------------------------------------------------------------------
  /**
   * Inserts unless the key or any alias is known. Returns the new seq, or null for a duplicate.
   * A copy that names the same post under another key (an alias: Slack's `app_mention` twin of a
   * `message`) and carries a mention the stored copy lacks is not lost: the stored copy takes the
   * mention while it is untriaged, and if it was already settled without an answer (kept as
   * context, or dropped), this copy is stored as an event of its own and triaged again.
   */
  insertInbox(event: RoutedEvent, now: number): number | null {
    if (
      this.sql.exec(`SELECT 1 FROM inbox WHERE dedup_key = ?`, event.envelope.dedupKey).toArray()
        .length > 0 ||
      this.sql
        .exec(`SELECT 1 FROM replay_guard WHERE dedup_key = ?`, event.envelope.dedupKey)
        .toArray().length > 0
    )
      return null;
    const keys = [event.envelope.dedupKey, ...(event.envelope.aliasKeys ?? [])];
    for (const key of keys) {
      const twin =
        this.sql
          .exec<{ seq: number }>(`SELECT seq FROM inbox WHERE dedup_key = ?`, key)
          .toArray()[0] ??
        this.sql
          .exec<{ seq: number }>(`SELECT seq FROM inbox_alias WHERE alias = ?`, key)
          .toArray()[0];
      if (twin && !this.takeMentionFromTwin(twin.seq, event)) return null;
      if (twin) break;
    }
    const serialized = JSON.stringify(event);
    // Durable Object SQLite in production refuses a value over 2 MB; local workerd does not. Checked
    // here so both refuse alike: the accept throws, the webhook answers 5xx, nothing is stored.
    const bytes = new TextEncoder().encode(serialized).byteLength;
    if (bytes > MAX_STORED_VALUE_BYTES)
      throw new Error(
        `event too large to store (${bytes} bytes; a stored value holds at most ${MAX_STORED_VALUE_BYTES})`,
      );
    const seq = this.sql
      .exec<{ seq: number }>(
        `INSERT INTO inbox(dedup_key, event, state, received_at) VALUES(?, ?, 'new', ?) RETURNING seq`,
        event.envelope.dedupKey,
        serialized,
        now,
      )
      .one().seq;
    if (event.envelope.replayGuardMs)
      this.sql.exec(
        `INSERT OR IGNORE INTO replay_guard(dedup_key, until) VALUES(?, ?)`,
        event.envelope.dedupKey,
        now + event.envelope.replayGuardMs,
      );
    for (const alias of event.envelope.aliasKeys ?? []) {
      this.sql.exec(
        `INSERT OR IGNORE INTO inbox_alias(alias, seq, at) VALUES(?, ?, ?)`,
        alias,
        seq,
        now,
      );
    }
    return seq;
  }

  /** For insertInbox: true when `copy` must be stored as an event of its own. */
  private takeMentionFromTwin(seq: number, copy: RoutedEvent): boolean {
    if (!copy.envelope.wasMentioned) return false;
    const row = this.inboxBySeq(seq);
    // A tombstone whose payload was cleared has been answered or dropped long ago.
    const stored = row?.event;
    if (!row || !stored?.envelope || stored.envelope.wasMentioned) return false;
    if (row.state === "new") {
      const envelope = {
        ...stored.envelope,
        wasMentioned: true,
        route: {
          ...stored.envelope.route,
          extra: { ...stored.envelope.route.extra, ...copy.envelope.route.extra },
        },
      };
      this.sql.exec(
        `UPDATE inbox SET event = ? WHERE seq = ?`,
        JSON.stringify({ ...stored, envelope }),
        seq,
      );
      return false;
    }
    // Settled without a reply, a run or a place in the queue: nobody was answered yet.
    return (
      row.state === "settled" && row.reply === null && row.runId === null && row.prepared === null
    );
  }

  inboxByState(state: InboxState): InboxRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM inbox WHERE state = ? ORDER BY seq`, state)
      .toArray()
      .map(toInboxRow);
  }
  /** Counts one more transient failure for each event; returns the highest count among them. */
  addInboxFailure(seqs: number[]): number {
    let highest = 0;
    for (const seq of seqs) {
      const row = this.sql
        .exec<{ failures: number }>(
          `UPDATE inbox SET failures = failures + 1 WHERE seq = ? RETURNING failures`,
          seq,
        )
        .toArray()[0];
      highest = Math.max(highest, row?.failures ?? 0);
    }
    return highest;
  }
  /** Ends an event without an answer of its own, keeping why (dead letter). */
  deadLetterInbox(seq: number, reason: string, notice: string | null, now: number): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'settled', dead_reason = ?, reply = ?, settled_at = ? WHERE seq = ?`,
      reason,
      notice,
      now,
      seq,
    );
  }
  deadLetteredInbox(): InboxRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM inbox WHERE dead_reason IS NOT NULL ORDER BY seq`)
      .toArray()
      .map(toInboxRow);
  }
  /** An operator discarded this dead letter: the row stays (it is the event's dedup tombstone), the mark goes. */
  clearInboxDeadReason(dedupKey: string): boolean {
    return (
      this.sql.exec(
        `UPDATE inbox SET dead_reason = NULL WHERE dedup_key = ? AND dead_reason IS NOT NULL`,
        dedupKey,
      ).rowsWritten > 0
    );
  }
  countInbox(state: InboxState): number {
    return this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM inbox WHERE state = ?`, state)
      .one().n;
  }
  inboxBySeq(seq: number): InboxRow | undefined {
    const row = this.sql.exec<Row>(`SELECT * FROM inbox WHERE seq = ?`, seq).toArray()[0];
    return row ? toInboxRow(row) : undefined;
  }
  inboxByKey(dedupKey: string): InboxRow | undefined {
    const row = this.sql
      .exec<Row>(`SELECT * FROM inbox WHERE dedup_key = ?`, dedupKey)
      .toArray()[0];
    return row ? toInboxRow(row) : undefined;
  }
  prepareInbox(seq: number, prepared: PreparedMessage): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'queued', prepared = ? WHERE seq = ?`,
      JSON.stringify(prepared),
      seq,
    );
  }
  settleInbox(seq: number, reply: string | null, now: number): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'settled', reply = ?, settled_at = ? WHERE seq = ?`,
      reply,
      now,
      seq,
    );
  }
  inboxByRun(runId: string): InboxRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM inbox WHERE run_id = ? ORDER BY seq`, runId)
      .toArray()
      .map(toInboxRow);
  }
  setInboxState(seq: number, state: InboxState, runId: string | null, now: number): void {
    this.sql.exec(
      `UPDATE inbox SET state = ?, run_id = COALESCE(?, run_id), settled_at = CASE WHEN ? = 'settled' THEN ? ELSE settled_at END WHERE seq = ?`,
      state,
      runId,
      state,
      now,
      seq,
    );
  }

  // ---- runs --------------------------------------------------------------------------------
  insertRun(
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
      `INSERT INTO runs(run_id, session_id, state, route, model_ref, progress_state, options, started_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?)`,
      run.runId,
      run.sessionId,
      run.state,
      JSON.stringify(run.route),
      run.modelRef,
      JSON.stringify(run.progressState),
      JSON.stringify(run.options),
      run.startedAt,
    );
  }
  activeRun(): RunRow | undefined {
    const row = this.sql
      .exec<Row>(`SELECT * FROM runs WHERE state = 'running' ORDER BY started_at LIMIT 1`)
      .toArray()[0];
    return row ? toRunRow(row) : undefined;
  }
  getRun(runId: string): RunRow | undefined {
    const row = this.sql.exec<Row>(`SELECT * FROM runs WHERE run_id = ?`, runId).toArray()[0];
    return row ? toRunRow(row) : undefined;
  }
  addRunUsage(
    runId: string,
    modelRef: string,
    usage: {
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
    },
  ): void {
    this.sql.exec(
      `UPDATE runs SET steps = steps + 1, model_ref = ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
         cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ? WHERE run_id = ?`,
      modelRef,
      usage.inputTokens,
      usage.outputTokens,
      usage.cacheReadTokens,
      usage.cacheWriteTokens,
      runId,
    );
  }
  /** Counts one more restart of the run; returns the new count. */
  addRunResume(runId: string): number {
    const row = this.sql
      .exec<{ resumes: number }>(
        `UPDATE runs SET resumes = resumes + 1 WHERE run_id = ? RETURNING resumes`,
        runId,
      )
      .toArray()[0];
    return row?.resumes ?? 0;
  }
  setRunProgress(runId: string, state: Record<string, string>): void {
    this.sql.exec(
      `UPDATE runs SET progress_state = ? WHERE run_id = ?`,
      JSON.stringify(state),
      runId,
    );
  }
  finishRun(runId: string, state: RunState, now: number): void {
    this.sql.exec(`UPDATE runs SET state = ?, finished_at = ? WHERE run_id = ?`, state, now, runId);
  }
  /** The agent has replied in this session at least once (thread participation). */
  hasAnsweredRun(): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM runs WHERE state = 'finished' LIMIT 1`).toArray().length > 0
    );
  }
  unmirroredRuns(limit: number): RunRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM runs WHERE state != 'running' AND mirrored = 0 ORDER BY started_at LIMIT ?`,
        limit,
      )
      .toArray()
      .map(toRunRow);
  }
  /** Something written here is not in Postgres yet (transcript rows, or usage of a finished run). */
  hasUnmirrored(): boolean {
    return (
      this.sql.exec(`SELECT 1 FROM transcript WHERE mirrored = 0 LIMIT 1`).toArray().length > 0 ||
      this.sql
        .exec(`SELECT 1 FROM runs WHERE state != 'running' AND mirrored = 0 LIMIT 1`)
        .toArray().length > 0 ||
      this.sql.exec(`SELECT 1 FROM model_calls WHERE mirrored = 0 LIMIT 1`).toArray().length > 0
    );
  }
  markRunsMirrored(runIds: string[]): void {
    for (const id of runIds) this.sql.exec(`UPDATE runs SET mirrored = 1 WHERE run_id = ?`, id);
  }
  sessionTotals(sessionId: string): { inputTokens: number; outputTokens: number; runs: number } {
    const row = this.sql
      .exec<{ i: number | null; o: number | null; n: number }>(
        `SELECT SUM(input_tokens) AS i, SUM(output_tokens) AS o, COUNT(*) AS n FROM runs WHERE session_id = ?`,
        sessionId,
      )
      .one();
    // Runs folded away by the retention sweep (retention.ts) still count.
    const folded = this.getJson<FoldedRuns>(`foldedRuns:${sessionId}`);
    return {
      inputTokens: (row.i ?? 0) + (folded?.inputTokens ?? 0),
      outputTokens: (row.o ?? 0) + (folded?.outputTokens ?? 0),
      runs: row.n + (folded?.runs ?? 0),
    };
  }

  // ---- transcript --------------------------------------------------------------------------
  appendTranscript(sessionId: string, runId: string | null, message: Message, now: number): number {
    return this.sql
      .exec<{ seq: number }>(
        `INSERT INTO transcript(session_id, run_id, role, message, created_at) VALUES(?, ?, ?, ?, ?) RETURNING seq`,
        sessionId,
        runId,
        message.role,
        JSON.stringify(message),
        now,
      )
      .one().seq;
  }
  transcript(sessionId: string, limit = 10_000): TranscriptRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM (SELECT * FROM transcript WHERE session_id = ? AND compacted = 0 ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
        sessionId,
        limit,
      )
      .toArray()
      .map(toTranscriptRow);
  }
  runTranscript(runId: string): TranscriptRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM transcript WHERE run_id = ? ORDER BY seq`, runId)
      .toArray()
      .map(toTranscriptRow);
  }
  /** Hides everything before `keepFromSeq` from the model; the rows stay for the Postgres archive. */
  markCompacted(sessionId: string, keepFromSeq: number): number {
    return this.sql.exec(
      `UPDATE transcript SET compacted = 1 WHERE session_id = ? AND seq < ? AND compacted = 0`,
      sessionId,
      keepFromSeq,
    ).rowsWritten;
  }
  unmirroredTranscript(limit: number): TranscriptRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM transcript WHERE mirrored = 0 ORDER BY seq LIMIT ?`, limit)
      .toArray()
      .map(toTranscriptRow);
  }
  markTranscriptMirrored(upToSeq: number): void {
    this.sql.exec(`UPDATE transcript SET mirrored = 1 WHERE mirrored = 0 AND seq <= ?`, upToSeq);
  }

  // ---- outbox ------------------------------------------------------------------------------
  insertOutbox(
    row: Pick<OutboxRow, "id" | "runId" | "route" | "text" | "chunkIndex" | "chunkCount">,
    now: number,
  ): void {
    this.sql.exec(
      `INSERT OR IGNORE INTO outbox(id, run_id, route, text, chunk_index, chunk_count, state, next_at, created_at) VALUES(?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      row.id,
      row.runId,
      JSON.stringify(row.route),
      row.text,
      row.chunkIndex,
      row.chunkCount,
      now,
      now,
    );
  }
  /**
   * Every chunk not yet settled, in delivery order (insertion order: replies as they were queued,
   * chunks of a reply by index). The outbox walks this list front to back and stops at the first
   * chunk that must wait, so nothing overtakes it.
   */
  unsettledOutbox(): OutboxRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM outbox WHERE state IN ('pending', 'sending', 'unknown') ORDER BY created_at, rowid`,
      )
      .toArray()
      .map(toOutboxRow);
  }
  /** When the outbox can next make progress: the due time of the first unsettled chunk (all others wait behind it). */
  nextOutboxAt(): number | undefined {
    const row = this.sql
      .exec<{ at: number }>(
        `SELECT next_at AS at FROM outbox WHERE state IN ('pending', 'sending', 'unknown') ORDER BY created_at, rowid LIMIT 1`,
      )
      .toArray()[0];
    return row?.at;
  }
  updateOutbox(
    id: string,
    patch: Partial<
      Pick<
        OutboxRow,
        "state" | "attempts" | "nextAt" | "platformId" | "lastError" | "firstAttemptAt"
      >
    >,
    now: number,
  ): void {
    const current = this.sql.exec<Row>(`SELECT * FROM outbox WHERE id = ?`, id).toArray()[0];
    if (!current) return;
    const row = { ...toOutboxRow(current), ...patch };
    const settled = row.state === "sent" || row.state === "dead";
    this.sql.exec(
      `UPDATE outbox SET state = ?, attempts = ?, next_at = ?, platform_id = ?, last_error = ?, first_attempt_at = ?, settled_at = ? WHERE id = ?`,
      row.state,
      row.attempts,
      row.nextAt,
      row.platformId,
      row.lastError,
      row.firstAttemptAt,
      settled ? now : null,
      id,
    );
  }
  /** An operator discarded this dead reply chunk. Only a dead row can go: a live one is still being delivered. */
  deleteDeadOutbox(id: string): boolean {
    return this.sql.exec(`DELETE FROM outbox WHERE id = ? AND state = 'dead'`, id).rowsWritten > 0;
  }
  outboxRows(state?: OutboxState): OutboxRow[] {
    const rows = state
      ? this.sql.exec<Row>(`SELECT * FROM outbox WHERE state = ? ORDER BY created_at, rowid`, state)
      : this.sql.exec<Row>(`SELECT * FROM outbox ORDER BY created_at, rowid`);
    return rows.toArray().map(toOutboxRow);
  }

  // ---- group history -----------------------------------------------------------------------
  pushGroupHistory(sender: string, text: string, at: number, limit: number): void {
    if (limit <= 0) return;
    this.sql.exec(`INSERT INTO group_history(sender, text, at) VALUES(?, ?, ?)`, sender, text, at);
    this.sql.exec(
      `DELETE FROM group_history WHERE seq NOT IN (SELECT seq FROM group_history ORDER BY seq DESC LIMIT ?)`,
      limit,
    );
  }
  takeGroupHistory(): Array<{ sender: string; text: string; at: number }> {
    const rows = this.sql
      .exec<{ sender: string; text: string; at: number }>(
        `SELECT sender, text, at FROM group_history ORDER BY seq`,
      )
      .toArray();
    this.sql.exec(`DELETE FROM group_history`);
    return rows;
  }
}
