import { TOMBSTONE_MS } from "../inbox/store.ts";
import { encodeFileRef } from "../../../functions/media/outbound.ts";
import { OpenKeys } from "../open-rows.ts";
import { toOutboxRow, type OutboxRow, type OutboxState, type Row } from "../storage-rows.ts";

/** Delivery order: insertion order (created_at, then ord), as `rows()` sorts in SQL. */
function deliveryOrder(a: Row, b: Row): number {
  const id = (row: Row) => String(row.id);
  return (
    Number(a.created_at) - Number(b.created_at) ||
    Number(a.ord) - Number(b.ord) ||
    (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)
  );
}

/**
 * The `outbox` table's one owner: reply chunks (and the files a reply sends) in delivery order
 * (pending → sending → sent; or queued as sending, where the channel can reconcile it, → sent;
 * unknown → reconciled; or dead).
 */
export class OutboxStore {
  /**
   * Chunks this isolate queued as possibly attempted ("sending", see `insert`) and has not handed
   * to the platform yet. In memory only, and that is the point: a new isolate (after a crash) starts
   * without it, so it reconciles every such chunk before sending it.
   */
  private readonly unattempted = new Set<string>();

  constructor(
    private readonly sql: SqlStorage,
    /** Which chunks may be open (open-rows.ts): no index names them. */
    private readonly open: OpenKeys<string> = new OpenKeys(),
  ) {}

  /**
   * Every chunk not yet settled, in delivery order: each id the open set names, read by primary
   * key (`settled_at` is set exactly when a chunk settles, cleared only when a dead one is
   * retried). One found settled or missing leaves the set once a read outside any transaction
   * agrees (open-rows.ts); before the set is known in this isolate, the table is scanned.
   */
  private openRows(): Row[] {
    const ids = this.open.known;
    if (!ids) {
      this.open.loadLater(() =>
        this.sql
          .exec<{ id: string }>(`SELECT id FROM outbox WHERE settled_at IS NULL`)
          .toArray()
          .map((row) => row.id),
      );
      return this.sql
        .exec<Row>(`SELECT * FROM outbox WHERE settled_at IS NULL`)
        .toArray()
        .sort(deliveryOrder);
    }
    const rows: Row[] = [];
    for (const id of ids) {
      const row = this.byId(id);
      if (row && row.settled_at === null) rows.push(row);
      else this.open.closeLater(id, (candidate) => this.byId(candidate)?.settled_at === null);
    }
    return rows.sort(deliveryOrder);
  }
  private byId(id: string): Row | undefined {
    return this.sql.exec<Row>(`SELECT * FROM outbox WHERE id = ?`, id).toArray()[0];
  }

  /**
   * Queues a chunk, "pending" — or "sending" when `maybeAttempted` (its channel can reconcile it,
   * queued-state.ts): then no mark is written before its first send, and a crash from here on
   * leaves a row recovery reconciles. A row this call wrote is untried here (whatever its state:
   * deliver-due.ts decides what that spares); an id already queued (by an earlier isolate, which
   * may have sent it) is left as it is.
   */
  insert(
    row: Pick<OutboxRow, "id" | "runId" | "route" | "text" | "chunkIndex" | "chunkCount"> &
      Partial<Pick<OutboxRow, "media">>,
    now: number,
    opts: { maybeAttempted?: boolean } = {},
  ): void {
    // ord keeps insertion order among chunks queued in the same millisecond (a reply's chunks, a
    // notice and a reply): above every chunk still open (the table has no rowid since schema
    // step 15, which saved a billed row per chunk).
    const ord = Math.max(0, ...this.openRows().map((open) => Number(open.ord))) + 1;
    // Joins the open set before the insert runs: no moment where the chunk is open and unnamed.
    this.open.opening(row.id);
    const written = this.sql.exec(
      `INSERT OR IGNORE INTO outbox(id, run_id, route, text, chunk_index, chunk_count, state, next_at, created_at, media, ord)
       VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.runId,
      JSON.stringify(row.route),
      row.text,
      row.chunkIndex,
      row.chunkCount,
      opts.maybeAttempted ? "sending" : "pending",
      now,
      now,
      row.media ? encodeFileRef(row.media) : null,
      ord,
    ).rowsWritten;
    if (written > 0) this.unattempted.add(row.id);
  }
  /** This isolate queued this chunk and knows no attempt of it has been made. */
  unattemptedHere(id: string): boolean {
    return this.unattempted.has(id);
  }
  /** An attempt of this chunk is starting (or it settled without one). */
  attempting(id: string): void {
    this.unattempted.delete(id);
  }
  /** The channel held the send back before any request (`notSent`): still untried here. */
  notAttempted(id: string): void {
    this.unattempted.add(id);
  }
  /**
   * Every chunk not yet settled, in delivery order (insertion order: replies as they were queued,
   * chunks of a reply by index). The outbox walks this list front to back and stops at the first
   * chunk that must wait, so nothing overtakes it.
   */
  unsettled(): OutboxRow[] {
    return this.openRows().map(toOutboxRow);
  }
  /** When the outbox can next make progress: the due time of the first unsettled chunk (all others wait behind it). */
  nextAt(): number | undefined {
    const first = this.openRows()[0];
    return first ? Number(first.next_at) : undefined;
  }
  update(
    id: string,
    patch: Partial<
      Pick<
        OutboxRow,
        "state" | "attempts" | "nextAt" | "platformId" | "lastError" | "firstAttemptAt"
      >
    >,
    now: number,
  ): void {
    const current = this.byId(id);
    if (!current) return;
    const row = { ...toOutboxRow(current), ...patch };
    const settled = row.state === "sent" || row.state === "dead";
    // A state written from anywhere (a mark, an outcome, an operator's retry, a settle without an
    // attempt) ends "untried here": only a send held back before any request (deliver-due.ts,
    // notAttempted, after this update) puts it back. Bounded by the open chunks.
    if (patch.state !== undefined) this.unattempted.delete(id);
    const fields = [row.state, row.attempts, row.nextAt, row.platformId, row.lastError];
    // settled_at names the open chunks: a step that leaves the chunk open (pending → sending →
    // unknown) does not write it; settling does, and a retried dead chunk clears it, after
    // joining the open set (open-rows.ts).
    if (!settled && current.settled_at !== null) this.open.opening(id);
    if (settled || current.settled_at !== null)
      this.sql.exec(
        `UPDATE outbox SET state = ?, attempts = ?, next_at = ?, platform_id = ?, last_error = ?, first_attempt_at = ?, settled_at = ? WHERE id = ?`,
        ...fields,
        row.firstAttemptAt,
        settled ? now : null,
        id,
      );
    else
      this.sql.exec(
        `UPDATE outbox SET state = ?, attempts = ?, next_at = ?, platform_id = ?, last_error = ?, first_attempt_at = ? WHERE id = ?`,
        ...fields,
        row.firstAttemptAt,
        id,
      );
  }
  /** An operator discarded this dead reply chunk. Only a dead row can go: a live one is still being delivered. */
  deleteDead(id: string): boolean {
    return this.sql.exec(`DELETE FROM outbox WHERE id = ? AND state = 'dead'`, id).rowsWritten > 0;
  }
  rows(state?: OutboxState): OutboxRow[] {
    const rows = state
      ? this.sql.exec<Row>(`SELECT * FROM outbox WHERE state = ? ORDER BY created_at, ord`, state)
      : this.sql.exec<Row>(`SELECT * FROM outbox ORDER BY created_at, ord`);
    return rows.toArray().map(toOutboxRow);
  }

  /** Runs with a chunk still in delivery (the sweep keeps their run rows). */
  runsInDelivery(): string[] {
    const runs = this.openRows().map((row) => row.run_id);
    return [...new Set(runs.filter((run): run is string => run !== null).map(String))];
  }

  /**
   * Bound: chunks in delivery + sent ones for TOMBSTONE_MS + dead letters for `deadLetterMs`, at
   * most `maxDead` of them.
   */
  prune(policy: { deadLetterMs: number; maxEntries: number }, now: number): void {
    this.sql.exec(`DELETE FROM outbox WHERE state = 'sent' AND settled_at < ?`, now - TOMBSTONE_MS);
    this.sql.exec(
      `DELETE FROM outbox WHERE state = 'dead' AND (COALESCE(settled_at, created_at) < ? OR id NOT IN
         (SELECT id FROM outbox WHERE state = 'dead' ORDER BY COALESCE(settled_at, created_at) DESC, ord DESC LIMIT ?))`,
      now - policy.deadLetterMs,
      policy.maxEntries,
    );
  }
  /** When prune next has a sent chunk or a dead letter to drop. */
  pruneDueAt(policy: { deadLetterMs: number }): number | undefined {
    const first = (query: string) =>
      this.sql.exec<{ at: number | null }>(query).one().at ?? undefined;
    const due: number[] = [];
    const sent = first(`SELECT MIN(settled_at) AS at FROM outbox WHERE state = 'sent'`);
    if (sent !== undefined) due.push(sent + TOMBSTONE_MS);
    const dead = first(
      `SELECT MIN(COALESCE(settled_at, created_at)) AS at FROM outbox WHERE state = 'dead'`,
    );
    if (dead !== undefined) due.push(dead + policy.deadLetterMs);
    return due.length ? Math.min(...due) : undefined;
  }
}
