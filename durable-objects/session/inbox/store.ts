import type { RoutedEvent } from "../../session-api.ts";
import type { MetaStore } from "../meta.ts";
import { OpenKeys } from "../open-rows.ts";
import { NewestInbound, type InboundRow } from "./newest-inbound.ts";
import { EVENTS, recordSettledByRun } from "./settled-by-run.ts";
import {
  toInboxRow,
  type InboxRow,
  type InboxState,
  type PreparedMessage,
  type Row,
  type TriageDecision,
} from "../storage-rows.ts";

/** The largest string or BLOB a Durable Object's SQLite stores (Cloudflare's documented limit: 2 MB). */
export const MAX_STORED_VALUE_BYTES = 2_000_000;

/** Dedup tombstones are kept this long after an event settles (platform retry windows are ≤ 24 h). */
export const TOMBSTONE_MS = 48 * 60 * 60 * 1000;
/** A settled event's payload is cleared after this; its dedup key and reply stay as the tombstone. */
export const PAYLOAD_MS = 60 * 60 * 1000;

/** A message triage accepted and holds in memory until its run starts (triage-pass.ts). */
export interface TriagedMessage {
  seq: number;
  prepared: PreparedMessage;
  decision: TriageDecision;
}

/**
 * The `inbox`, `inbox_alias` and `replay_guard` tables' one owner: every accepted event, its place in the inbox
 * state machine (new → queued → taken → settled, or settled with a dead reason; README.md), and
 * its dedup tombstone afterwards. Reads go through EVENTS: an event its run's end settled is
 * settled there before its row says so (settled-by-run.ts).
 */
export class InboxStore {
  constructor(
    private readonly sql: SqlStorage,
    /** meta inboxSeqFloor: the highest seq given when the newest rows were deleted. */
    private readonly meta: MetaStore,
    /** Which events may be open (open-rows.ts): no index names them. */
    private readonly open: OpenKeys<number> = new OpenKeys(),
  ) {}
  /** What triage's last-inbound reads have walked so far (newest-inbound.ts). */
  private inbound: NewestInbound | undefined;

  /**
   * Every event not yet settled, by seq: each seq the open set names, read by primary key
   * (`settled_at` is set exactly when an event settles, by settle and deadLetter or by its run's
   * end, settled-by-run.ts, and never cleared). One found settled or missing leaves the set once
   * a read outside any transaction agrees (open-rows.ts); before the set is known in this
   * isolate, the table is scanned.
   */
  private openRows(): Row[] {
    const seqs = this.open.known;
    if (!seqs) {
      this.open.loadLater(() =>
        this.sql
          .exec<{ seq: number }>(`SELECT seq FROM ${EVENTS} WHERE settled_at IS NULL`)
          .toArray()
          .map((row) => row.seq),
      );
      return this.sql
        .exec<Row>(`SELECT * FROM ${EVENTS} WHERE settled_at IS NULL ORDER BY seq`)
        .toArray();
    }
    const rows: Row[] = [];
    for (const seq of seqs) {
      const row = this.rowAt(seq);
      if (row && row.settled_at === null) rows.push(row);
      else this.open.closeLater(seq, (candidate) => this.rowAt(candidate)?.settled_at === null);
    }
    return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  }
  private rowAt(seq: number): Row | undefined {
    return this.sql.exec<Row>(`SELECT * FROM ${EVENTS} WHERE seq = ?`, seq).toArray()[0];
  }

  /**
   * Inserts unless the event is known. Returns the new seq, or null for a duplicate.
   *
   * One key row per event: its dedup key. A message's dedup key is the message's own id where that
   * decides every duplicate case alone (a retry names the same message), so a retry finds the row
   * by it. Where one post comes as two deliveries (Slack's `message` and `app_mention` twins, which
   * share `<channel>:<ts>`), the envelope also names its delivery (`deliveryKey`), and the dedup key
   * finds the twin instead of ending the accept: a copy that carries a mention the stored copy lacks
   * is not lost. The stored copy takes the mention while it is untriaged, and if it was already
   * settled without an answer (kept as context, or dropped), this copy is stored as an event of its
   * own, under its delivery key, and triaged again; a retry of it finds that key. Rows stored before
   * (under an event id, the message id as an alias row; or by a companion of an earlier release)
   * are found by the same look-ups: the delivery key is the old row's key, the dedup key its alias.
   */
  insert(event: RoutedEvent, now: number): number | null {
    const { dedupKey, deliveryKey, aliasKeys = [] } = event.envelope;
    if (
      this.sql.exec(`SELECT 1 FROM replay_guard WHERE dedup_key = ?`, dedupKey).toArray().length > 0
    )
      return null;
    const own = this.seqByKey(dedupKey);
    // The same key again is a retry, unless the key names a post its twin shares.
    if (own !== undefined && deliveryKey === undefined) return null;
    if (deliveryKey !== undefined && this.seqByKey(deliveryKey) !== undefined) return null;
    let twin = own ?? this.seqByAlias(dedupKey);
    for (const key of aliasKeys) twin ??= this.seqByKey(key) ?? this.seqByAlias(key);
    if (twin !== undefined && !this.takeMentionFromTwin(twin, event)) return null;
    // Only a copy with a delivery key gets here with its dedup key taken (by its twin).
    const key = own === undefined ? dedupKey : deliveryKey!;
    return this.insertRow(
      key === dedupKey ? event : { ...event, envelope: { ...event.envelope, dedupKey: key } },
      now,
    );
  }

  private seqByKey(key: string): number | undefined {
    return this.sql
      .exec<{ seq: number }>(`SELECT seq FROM inbox WHERE dedup_key = ?`, key)
      .toArray()[0]?.seq;
  }
  private seqByAlias(key: string): number | undefined {
    return this.sql
      .exec<{ seq: number }>(`SELECT seq FROM inbox_alias WHERE alias = ?`, key)
      .toArray()[0]?.seq;
  }

  /** The row (and its replay guard and alias rows) of an event insert found new. */
  private insertRow(event: RoutedEvent, now: number): number {
    const serialized = JSON.stringify(event);
    // Durable Object SQLite in production refuses a value over 2 MB; local workerd does not. Checked
    // here so both refuse alike: the accept throws, the webhook answers 5xx, nothing is stored.
    const bytes = new TextEncoder().encode(serialized).byteLength;
    if (bytes > MAX_STORED_VALUE_BYTES)
      throw new Error(
        `event too large to store (${bytes} bytes; a stored value holds at most ${MAX_STORED_VALUE_BYTES})`,
      );
    // The seq above every one given before (schema step 14: no AUTOINCREMENT, whose sequence row
    // was a billed write per insert): above the newest row, and above the floor prune leaves. It
    // joins the open set before the insert runs (open-rows.ts).
    const seq = this.sql
      .exec<{ seq: number }>(
        `SELECT MAX(COALESCE(MAX(seq), 0), CAST(? AS INTEGER)) + 1 AS seq FROM inbox`,
        Number(this.meta.get("inboxSeqFloor") ?? 0),
      )
      .one().seq;
    this.open.opening(seq);
    this.sql.exec(
      `INSERT INTO inbox(seq, dedup_key, event, state, received_at) VALUES(?, ?, ?, 'new', ?)`,
      seq,
      event.envelope.dedupKey,
      serialized,
      now,
    );
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

  /** For insert: true when `copy` must be stored as an event of its own. */
  private takeMentionFromTwin(seq: number, copy: RoutedEvent): boolean {
    if (!copy.envelope.wasMentioned) return false;
    const row = this.bySeq(seq);
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

  byState(state: InboxState): InboxRow[] {
    const rows =
      state === "settled"
        ? this.sql
            .exec<Row>(`SELECT * FROM ${EVENTS} WHERE state = 'settled' ORDER BY seq`)
            .toArray()
        : this.openRows().filter((row) => row.state === state);
    return rows.map(toInboxRow);
  }
  /** Counts one more transient failure for each event; returns the highest count among them. */
  addFailure(seqs: number[]): number {
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
  deadLetter(seq: number, reason: string, notice: string | null, now: number): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'settled', dead_reason = ?, reply = ?, settled_at = ? WHERE seq = ?`,
      reason,
      notice,
      now,
      seq,
    );
  }
  deadLettered(): InboxRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM inbox WHERE dead_reason IS NOT NULL ORDER BY seq`)
      .toArray()
      .map(toInboxRow);
  }
  /** An operator discarded this dead letter: the row stays (it is the event's dedup tombstone), the mark goes. */
  clearDeadReason(dedupKey: string): boolean {
    return (
      this.sql.exec(
        `UPDATE inbox SET dead_reason = NULL WHERE dedup_key = ? AND dead_reason IS NOT NULL`,
        dedupKey,
      ).rowsWritten > 0
    );
  }
  count(state: InboxState): number {
    if (state !== "settled") return this.openRows().filter((row) => row.state === state).length;
    return this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${EVENTS} WHERE state = 'settled'`)
      .one().n;
  }
  bySeq(seq: number): InboxRow | undefined {
    const row = this.rowAt(seq);
    return row ? toInboxRow(row) : undefined;
  }
  byKey(dedupKey: string): InboxRow | undefined {
    const row = this.sql
      .exec<Row>(`SELECT * FROM ${EVENTS} WHERE dedup_key = ?`, dedupKey)
      .toArray()[0];
    return row ? toInboxRow(row) : undefined;
  }
  /** The event a key names: its own dedup key, or an alias of a stored twin (Slack's app_mention copy). */
  byKeyOrAlias(key: string): InboxRow | undefined {
    const own = this.byKey(key);
    if (own) return own;
    const alias = this.sql
      .exec<{ seq: number }>(`SELECT seq FROM inbox_alias WHERE alias = ?`, key)
      .toArray()[0];
    return alias ? this.bySeq(alias.seq) : undefined;
  }
  /** new → queued, with what triage decided when it says (one row written for both). */
  prepare(seq: number, prepared: PreparedMessage, decision?: TriageDecision): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'queued', prepared = ?, decision = COALESCE(?, decision) WHERE seq = ?`,
      JSON.stringify(prepared),
      decision ? JSON.stringify(decision) : null,
      seq,
    );
  }
  settle(seq: number, reply: string | null, now: number): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'settled', reply = ?, settled_at = ? WHERE seq = ?`,
      reply,
      now,
      seq,
    );
  }
  /** Records what triage decided for the event (kept as long as its tombstone). */
  decide(seq: number, decision: TriageDecision): void {
    this.sql.exec(`UPDATE inbox SET decision = ? WHERE seq = ?`, JSON.stringify(decision), seq);
  }
  byRun(runId: string): InboxRow[] {
    return this.sql
      .exec<Row>(`SELECT * FROM ${EVENTS} WHERE run_id = ? ORDER BY seq`, runId)
      .toArray()
      .map(toInboxRow);
  }
  /**
   * Writes the events these runs' ends settled as settled (settled-by-run.ts): the sweep asks
   * before it deletes the runs (run/runs-store.ts prune), whose rows their state is read from.
   */
  recordSettled(runIds: readonly string[]): void {
    recordSettledByRun(this.sql, {
      where: `runs.run_id IN (SELECT value FROM json_each(?))`,
      bindings: [JSON.stringify(runIds)],
    });
  }
  /** queued → taken by the run `runId`. */
  take(seq: number, runId: string): void {
    this.sql.exec(`UPDATE inbox SET state = 'taken', run_id = ? WHERE seq = ?`, runId, seq);
  }
  /**
   * new → taken by the run `runId` that starts as triage accepts the event, with what triage
   * decided: the one write of both steps (run/execute.ts startTriagedRun).
   */
  takeTriaged(seq: number, runId: string, triaged: TriagedMessage): void {
    this.sql.exec(
      `UPDATE inbox SET state = 'taken', run_id = ?, prepared = ?, decision = ? WHERE seq = ?`,
      runId,
      JSON.stringify(triaged.prepared),
      JSON.stringify(triaged.decision),
      seq,
    );
  }

  /**
   * The newest event above `floor` that triage accepted as a person's message and that still has
   * its payload (the sweep folds it into meta before clearing that). Reads only the rows above
   * what an earlier read of this isolate already walked (newest-inbound.ts).
   */
  newestInbound(floor: number): InboundRow | undefined {
    this.inbound ??= new NewestInbound(this.sql, PAYLOAD_MS);
    return this.inbound.newest(floor);
  }

  /** Seqs of the events not yet settled (their progress state in meta is still live). */
  unsettledSeqs(): number[] {
    return this.openRows().map((row) => Number(row.seq));
  }
  countUnsettled(): number {
    return this.openRows().length;
  }

  /** Bound: unsettled events + tombstones for TOMBSTONE_MS (payload cleared after PAYLOAD_MS); aliases likewise. */
  prune(now: number): void {
    // Rows their run's end settled (settled-by-run.ts), an hour on: written settled, payload
    // cleared, in one write; then the rows settled by a write of their own.
    recordSettledByRun(this.sql, {
      where: `runs.finished_at < ?`,
      bindings: [now - PAYLOAD_MS],
      clearPayload: true,
    });
    this.sql.exec(
      `UPDATE inbox SET event = '{}' WHERE state = 'settled' AND event != '{}' AND settled_at < ?`,
      now - PAYLOAD_MS,
    );
    const newest = this.newestSeq();
    this.sql.exec(
      `DELETE FROM inbox WHERE state = 'settled' AND settled_at < ?`,
      now - TOMBSTONE_MS,
    );
    // The newest tombstone went too (an idle session): its seq stays taken.
    if (newest > this.newestSeq()) this.meta.set("inboxSeqFloor", String(newest));
    this.sql.exec(`DELETE FROM inbox_alias WHERE at < ?`, now - TOMBSTONE_MS);
    this.sql.exec(`DELETE FROM replay_guard WHERE until < ?`, now);
  }
  private newestSeq(): number {
    return (
      this.sql.exec<{ seq: number | null }>(`SELECT MAX(seq) AS seq FROM inbox`).one().seq ?? 0
    );
  }
  /** When prune next has a tombstone or an expired replay-guard key to drop. */
  pruneDueAt(): number | undefined {
    const settled = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(settled_at) AS at FROM ${EVENTS} WHERE state = 'settled'`,
      )
      .one().at;
    const guard = this.sql
      .exec<{ at: number | null }>(`SELECT MIN(until) AS at FROM replay_guard`)
      .one().at;
    const due = [
      ...(settled === null ? [] : [settled + TOMBSTONE_MS]),
      ...(guard === null ? [] : [guard + 1]),
    ];
    return due.length ? Math.min(...due) : undefined;
  }
}
