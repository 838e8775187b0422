import type { BrowserAction, BrowserReply } from "../../functions/agent/browser-wire.ts";

/**
 * The browser session's record of tool calls, one row per tool-call id, written before the action
 * runs and again with its answer, as the session's exec calls are (durable-objects/session/
 * exec-store.ts). A call asked again (a run resumed after its Durable Object crashed between the
 * browser's answer and the transcript) gets the recorded answer and runs nothing. A row still
 * "started" from an earlier instance of this object was cut off mid-action: a read-only action runs
 * again, any other answers that its outcome is unknown rather than submit a form twice.
 * Screenshots' bytes are never kept here (the caller stores them); rows go after a day.
 */

const KEEP_MS = 24 * 3_600_000;

export const BROWSER_TABLES = [
  `CREATE TABLE IF NOT EXISTS browser_calls (
    tool_call_id TEXT PRIMARY KEY, action TEXT NOT NULL, instance TEXT NOT NULL,
    state TEXT NOT NULL, reply TEXT, started_at INTEGER NOT NULL, finished_at INTEGER)`,
  `CREATE TABLE IF NOT EXISTS browser_session (
    id INTEGER PRIMARY KEY CHECK (id = 1), session_id TEXT, current_tab TEXT,
    opened_at INTEGER, charged_at INTEGER, last_used_at INTEGER)`,
  `CREATE TABLE IF NOT EXISTS browser_days (day TEXT PRIMARY KEY, ms INTEGER NOT NULL)`,
  // Browser time charged but not yet handed to the main Worker's meter (the idle close's tail).
  `CREATE TABLE IF NOT EXISTS browser_unreported (id INTEGER PRIMARY KEY CHECK (id = 1), ms INTEGER NOT NULL)`,
];

export type Recorded =
  | { kind: "new" }
  | { kind: "done"; reply: BrowserReply }
  | { kind: "interrupted"; action: BrowserAction };

interface CallRow {
  action: string;
  instance: string;
  state: string;
  reply: string | null;
  [column: string]: SqlStorageValue;
}

export class CallStore {
  constructor(
    private readonly sql: SqlStorage,
    /** This instance of the object: a "started" row of another one was cut off. */
    private readonly instance: string,
  ) {
    for (const statement of BROWSER_TABLES) sql.exec(statement);
  }

  /** What is known of `toolCallId`; a new call is recorded as started. */
  begin(toolCallId: string, action: BrowserAction, now: number, readOnly: boolean): Recorded {
    const row = this.sql
      .exec<CallRow>(`SELECT * FROM browser_calls WHERE tool_call_id = ?`, toolCallId)
      .toArray()[0];
    if (row?.state === "done" && row.reply)
      return { kind: "done", reply: JSON.parse(row.reply) as BrowserReply };
    if (row && row.instance !== this.instance && !readOnly)
      return { kind: "interrupted", action: row.action as BrowserAction };
    this.sql.exec(
      `INSERT OR REPLACE INTO browser_calls(tool_call_id, action, instance, state, started_at)
       VALUES (?, ?, ?, 'started', ?)`,
      toolCallId,
      action,
      this.instance,
      now,
    );
    return { kind: "new" };
  }

  /** Records the answer (without image bytes) so a repeat of the call gets it again. */
  finish(toolCallId: string, reply: BrowserReply, now: number): void {
    const { image: _image, ...kept } = reply;
    this.sql.exec(
      `UPDATE browser_calls SET state = 'done', reply = ?, finished_at = ? WHERE tool_call_id = ?`,
      JSON.stringify(kept),
      now,
      toolCallId,
    );
    this.sql.exec(`DELETE FROM browser_calls WHERE started_at < ?`, now - KEEP_MS);
  }
}
