import type { StartOp } from "../../functions/sandbox/wire.ts";

/**
 * The session's sandbox commands (table exec_calls, schema step 7), one row per exec keyed by
 * `<sessionId>:<toolCallId>`. The row is written before the sandbox is asked to start the command
 * and updated when it answers, so a run resumed after a crash reads the row instead of starting
 * the command again; a background command is polled from the alarm until its end is recorded.
 */
export type ExecState =
  /** Waiting for /approve (tools.exec.ask). */
  | "approval"
  /** Recorded; the sandbox's answer to the start is not yet stored. */
  | "starting"
  | "running"
  | "finished"
  | "denied";

export interface ExecFinal {
  state: "exited" | "lost" | "unknown";
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  output: string;
  outputChars: number;
  droppedChars: number;
  omittedChars: number;
  durationMs: number;
  /** What the workspace sync did with the command's file changes. */
  written: string[];
  conflicts: string[];
  skipped: string[];
  killedByStop?: boolean;
}

/** The start request as sent (files left out), and what finishing it needs later. */
export type ExecRequest = Omit<StartOp, "files"> & {
  agentId: string;
  sessionKey: string;
  mainPrivateSession: boolean;
};

export interface ExecRow {
  execId: string;
  callId: string;
  sessionId: string;
  scope: string;
  state: ExecState;
  command: string;
  request: ExecRequest;
  background: boolean;
  notify: boolean;
  result: ExecFinal | null;
  outputSeen: number;
  nextPollAt: number | null;
  pollCount: number;
  createdAt: number;
  finishedAt: number | null;
}

interface Raw {
  exec_id: string;
  call_id: string;
  session_id: string;
  scope: string;
  state: string;
  command: string;
  request: string;
  background: number;
  notify: number;
  result: string | null;
  output_seen: number;
  next_poll_at: number | null;
  poll_count: number;
  created_at: number;
  finished_at: number | null;
  [column: string]: SqlStorageValue;
}

function fromRaw(raw: Raw): ExecRow {
  return {
    execId: raw.exec_id,
    callId: raw.call_id,
    sessionId: raw.session_id,
    scope: raw.scope,
    state: raw.state as ExecState,
    command: raw.command,
    request: JSON.parse(raw.request) as ExecRow["request"],
    background: raw.background === 1,
    notify: raw.notify === 1,
    result: raw.result ? (JSON.parse(raw.result) as ExecFinal) : null,
    outputSeen: raw.output_seen,
    nextPollAt: raw.next_poll_at,
    pollCount: raw.poll_count,
    createdAt: raw.created_at,
    finishedAt: raw.finished_at,
  };
}

/** Finished commands kept for `process list/poll/log` (OpenClaw keeps at most 50). */
const MAX_FINISHED = 50;

export class ExecStore {
  constructor(private readonly sql: SqlStorage) {}

  get(execId: string): ExecRow | undefined {
    const raw = this.sql
      .exec<Raw>(`SELECT * FROM exec_calls WHERE exec_id = ?`, execId)
      .toArray()[0];
    return raw ? fromRaw(raw) : undefined;
  }

  /** The newest row of a tool-call id (what `process` names a command by). */
  byCallId(callId: string): ExecRow | undefined {
    const raw = this.sql
      .exec<Raw>(
        `SELECT * FROM exec_calls WHERE call_id = ? ORDER BY created_at DESC LIMIT 1`,
        callId,
      )
      .toArray()[0];
    return raw ? fromRaw(raw) : undefined;
  }

  list(): ExecRow[] {
    return this.sql
      .exec<Raw>(`SELECT * FROM exec_calls ORDER BY created_at`)
      .toArray()
      .map(fromRaw);
  }

  /** Running and approval-waiting rows (the ones /stop and the poller care about). */
  open(): ExecRow[] {
    return this.sql
      .exec<Raw>(
        `SELECT * FROM exec_calls WHERE state IN ('approval', 'starting', 'running') ORDER BY created_at`,
      )
      .toArray()
      .map(fromRaw);
  }

  insert(
    row: Omit<ExecRow, "result" | "outputSeen" | "nextPollAt" | "pollCount" | "finishedAt">,
  ): void {
    this.sql.exec(
      `INSERT INTO exec_calls(exec_id, call_id, session_id, scope, state, command, request, background, notify, created_at)
       VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.execId,
      row.callId,
      row.sessionId,
      row.scope,
      row.state,
      row.command,
      JSON.stringify(row.request),
      row.background ? 1 : 0,
      row.notify ? 1 : 0,
      row.createdAt,
    );
  }

  /** /approve: it starts now, in the background, and reports its end. */
  approve(execId: string): void {
    this.sql.exec(
      `UPDATE exec_calls SET state = 'starting', background = 1, notify = 1 WHERE exec_id = ?`,
      execId,
    );
  }

  setState(execId: string, state: ExecState): void {
    this.sql.exec(`UPDATE exec_calls SET state = ? WHERE exec_id = ?`, state, execId);
  }

  markRunning(execId: string, nextPollAt: number, outputSeen: number): void {
    this.sql.exec(
      `UPDATE exec_calls SET state = 'running', background = 1, next_poll_at = ?, poll_count = poll_count + 1, output_seen = MAX(output_seen, ?) WHERE exec_id = ?`,
      nextPollAt,
      outputSeen,
      execId,
    );
  }

  setOutputSeen(execId: string, outputSeen: number): void {
    this.sql.exec(
      `UPDATE exec_calls SET output_seen = MAX(output_seen, ?) WHERE exec_id = ?`,
      outputSeen,
      execId,
    );
  }

  finish(execId: string, result: ExecFinal, now: number): void {
    this.sql.exec(
      `UPDATE exec_calls SET state = 'finished', result = ?, next_poll_at = NULL, finished_at = ? WHERE exec_id = ?`,
      JSON.stringify(result),
      now,
      execId,
    );
  }

  deny(execId: string, now: number): void {
    this.sql.exec(
      `UPDATE exec_calls SET state = 'denied', next_poll_at = NULL, finished_at = ? WHERE exec_id = ?`,
      now,
      execId,
    );
  }

  remove(execId: string): void {
    this.sql.exec(`DELETE FROM exec_calls WHERE exec_id = ?`, execId);
  }

  /** The earliest background poll due (the alarm plan's term). */
  nextPollAt(): number | undefined {
    const row = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(next_poll_at) AS at FROM exec_calls WHERE next_poll_at IS NOT NULL`,
      )
      .toArray()[0];
    return row?.at ?? undefined;
  }

  duePolls(now: number): ExecRow[] {
    return this.sql
      .exec<Raw>(
        `SELECT * FROM exec_calls WHERE next_poll_at IS NOT NULL AND next_poll_at <= ? ORDER BY next_poll_at LIMIT 20`,
        now,
      )
      .toArray()
      .map(fromRaw);
  }

  /** Finished rows older than `keepMs`, and any beyond the newest MAX_FINISHED, are dropped. */
  prune(now: number, keepMs: number): void {
    this.sql.exec(
      `DELETE FROM exec_calls WHERE state IN ('finished', 'denied') AND finished_at < ?`,
      now - keepMs,
    );
    this.sql.exec(
      `DELETE FROM exec_calls WHERE state IN ('finished', 'denied') AND exec_id NOT IN (
         SELECT exec_id FROM exec_calls WHERE state IN ('finished', 'denied') ORDER BY finished_at DESC LIMIT ?)`,
      MAX_FINISHED,
    );
  }
}
