import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/**
 * The companion's durable outbox (Node's built-in SQLite, WAL, synchronous FULL): every raw event is written here
 * before anything else happens to it, and its row is deleted only when the Worker answered "stored"
 * (or dead-lettered when the Worker says it can never be stored). Rows left by a crash are sent
 * again at the next start, before any connector runs. Bounded: past `maxRows` submit() refuses, so
 * a Worker outage applies back-pressure to the connectors instead of filling the disk.
 *
 * It also keeps `/v1/outbound`'s commandId → receipt table, so a retried command is answered from
 * here and never sent twice, across restarts.
 */
export interface OutboxRow {
  seq: number;
  channel: string;
  accountId: string;
  eventId: string;
  payload: string;
  receivedAt: number;
}

export class OutboxFullError extends Error {
  constructor(maxRows: number) {
    super(
      `companion outbox is full (${maxRows} rows, EDGECLAW_COMPANION_OUTBOX_MAX_ROWS): the Worker is not taking events`,
    );
  }
}

export class Outbox {
  private readonly db: DatabaseSync;

  constructor(
    dataDir: string,
    private readonly maxRows: number,
  ) {
    mkdirSync(dataDir, { recursive: true });
    this.db = new DatabaseSync(join(dataDir, "outbox.sqlite"));
    this.db.exec("PRAGMA journal_mode = WAL");
    // FULL: a row is on disk when insert returns, even if the machine (not just the process) dies.
    this.db.exec("PRAGMA synchronous = FULL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, account_id TEXT NOT NULL, event_id TEXT NOT NULL, payload TEXT NOT NULL, received_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, UNIQUE (channel, account_id, event_id));
      CREATE TABLE IF NOT EXISTS dead_events (channel TEXT NOT NULL, account_id TEXT NOT NULL, event_id TEXT NOT NULL, error TEXT NOT NULL, dead_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS receipts (command_id TEXT PRIMARY KEY, answer TEXT NOT NULL, at INTEGER NOT NULL);
    `);
  }

  /** Inserts the events not already waiting (same channel, account and event id = the same row). Throws OutboxFullError past the bound. */
  add(
    channel: string,
    accountId: string,
    events: Array<{ eventId: string; payload: unknown }>,
    receivedAt: number,
  ): void {
    const insert = this.db.prepare(
      `INSERT OR IGNORE INTO events (channel, account_id, event_id, payload, received_at) VALUES (?, ?, ?, ?, ?)`,
    );
    const count = this.db.prepare(`SELECT COUNT(*) AS n FROM events`);
    this.transaction(() => {
      if ((count.get() as { n: number }).n + events.length > this.maxRows)
        throw new OutboxFullError(this.maxRows);
      for (const event of events)
        insert.run(
          channel,
          accountId,
          event.eventId,
          JSON.stringify(event.payload ?? null),
          receivedAt,
        );
    });
  }

  /** The oldest rows of one account, in arrival order (per-account FIFO). */
  pending(channel: string, accountId: string, limit: number): OutboxRow[] {
    return this.db
      .prepare(
        `SELECT seq, channel, account_id AS accountId, event_id AS eventId, payload, received_at AS receivedAt FROM events WHERE channel = ? AND account_id = ? ORDER BY seq LIMIT ?`,
      )
      .all(channel, accountId, limit)
      .map((row) => ({
        seq: Number(row.seq),
        channel: String(row.channel),
        accountId: String(row.accountId),
        eventId: String(row.eventId),
        payload: String(row.payload),
        receivedAt: Number(row.receivedAt),
      }));
  }

  has(channel: string, accountId: string, eventId: string): boolean {
    return (
      this.db
        .prepare(`SELECT 1 FROM events WHERE channel = ? AND account_id = ? AND event_id = ?`)
        .get(channel, accountId, eventId) !== undefined
    );
  }

  remove(channel: string, accountId: string, eventIds: string[]): void {
    const remove = this.db.prepare(
      `DELETE FROM events WHERE channel = ? AND account_id = ? AND event_id = ?`,
    );
    this.transaction(() => {
      for (const eventId of eventIds) remove.run(channel, accountId, eventId);
    });
  }

  /** The Worker said this event can never be stored: keep why (not the payload) and let the account go on. */
  deadLetter(channel: string, accountId: string, eventId: string, error: string): void {
    this.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO dead_events (channel, account_id, event_id, error, dead_at) VALUES (?, ?, ?, ?, ?)`,
        )
        .run(channel, accountId, eventId, error.slice(0, 500), Date.now());
      this.db
        .prepare(`DELETE FROM events WHERE channel = ? AND account_id = ? AND event_id = ?`)
        .run(channel, accountId, eventId);
    });
  }

  markAttempt(channel: string, accountId: string, eventIds: string[]): void {
    const mark = this.db.prepare(
      `UPDATE events SET attempts = attempts + 1 WHERE channel = ? AND account_id = ? AND event_id = ?`,
    );
    this.transaction(() => {
      for (const eventId of eventIds) mark.run(channel, accountId, eventId);
    });
  }

  /** Accounts with rows waiting (resent at start, before connectors start). */
  accountsWithRows(): Array<{ channel: string; accountId: string }> {
    return this.db
      .prepare(`SELECT DISTINCT channel, account_id AS accountId FROM events`)
      .all()
      .map((row) => ({ channel: String(row.channel), accountId: String(row.accountId) }));
  }

  size(): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM events`).get() as { n: number }).n;
  }

  deadCount(): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM dead_events`).get() as { n: number }).n;
  }

  receipt(commandId: string, ttlMs: number): unknown {
    const row = this.db
      .prepare(`SELECT answer, at FROM receipts WHERE command_id = ?`)
      .get(commandId) as { answer: string; at: number } | undefined;
    return row && row.at > Date.now() - ttlMs ? (JSON.parse(row.answer) as unknown) : undefined;
  }

  saveReceipt(commandId: string, answer: unknown, ttlMs: number): void {
    this.db
      .prepare(`INSERT OR REPLACE INTO receipts (command_id, answer, at) VALUES (?, ?, ?)`)
      .run(commandId, JSON.stringify(answer), Date.now());
    this.db.prepare(`DELETE FROM receipts WHERE at <= ?`).run(Date.now() - ttlMs);
  }

  /** Runs `work` as one SQLite transaction: all of it is on disk, or (when it throws) none of it. */
  private transaction(work: () => void): void {
    this.db.exec("BEGIN IMMEDIATE");
    try {
      work();
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  close(): void {
    this.db.close();
  }
}
