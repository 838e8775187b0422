import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { EVENTS } from "./settled-by-run.ts";

/** The newest person's message triage accepted (`decision.userAt`), with its route (last-inbound.ts). */
export interface InboundRow {
  seq: number;
  route: ReplyRoute;
  userAt: number;
  /** The next sweep clears its payload (and with it the route): settled more than PAYLOAD_MS ago. */
  payloadExpired: (now: number) => boolean;
}

type Found = {
  seq: number;
  route: string | null;
  user_at: number;
};

/**
 * Finds the newest event above a floor that triage accepted as a person's message and that still
 * has its payload (InboxStore.newestInbound). Triage reads it for every message (the idle reset),
 * so it must not walk every row since that message each time: in a mention-gated group most rows
 * are never accepted, and with no accepted message above the floor the walk would read the whole
 * 48 h of tombstones per message.
 *
 * What a walk saw is kept for the isolate: every row up to `settledUpTo` had been triaged (none
 * was still `new`), and triage writes `userAt` only once, with its decision, so those rows never
 * become accepted later; the next walk reads only the rows above it. When it finds none, the newest
 * accepted row seen before is the answer while it is above the caller's floor (the sweep raises
 * that before it clears the row's payload) and a read by its key still finds it accepted.
 *
 * `settledUpTo` is what the walk saw triaged and, read again in a microtask (once the stack is
 * empty, after any `transactionSync`), what storage holds as committed, whichever is lower: a row
 * triaged after the walk is not covered by what it found, and a walk inside a transaction that
 * triage's decision then rolls back (its row `new` again) must not count that row as triaged.
 */
export class NewestInbound {
  private seen: { settledUpTo: number; foundSeq: number | undefined } | undefined;

  constructor(
    private readonly sql: SqlStorage,
    private readonly payloadMs: number,
  ) {}

  newest(floor: number): InboundRow | undefined {
    const from = Math.max(floor, this.seen?.settledUpTo ?? 0);
    const above = this.accepted(`seq > ? ORDER BY seq DESC LIMIT 1`, from);
    // The row itself is read again, by its key: only its seq is kept from the earlier walk.
    const earlier = this.seen?.foundSeq;
    const found =
      above ??
      (earlier !== undefined && earlier > floor ? this.accepted(`seq = ?`, earlier) : undefined);
    const foundSeq = found?.seq;
    // Triaged as this walk saw it, and as committed: a row triaged after the walk (triage reads
    // this before it writes the row's decision) is not covered by what the walk found, and a row
    // whose triage a rolled-back transaction wrote is not triaged.
    const walked = this.triagedUpTo(from);
    queueMicrotask(() => {
      // A row found inside a transaction that then rolled back is no answer: walk in full next.
      const committed = foundSeq === undefined || this.accepted(`seq = ?`, foundSeq) !== undefined;
      this.seen = committed
        ? { settledUpTo: Math.min(walked, this.triagedUpTo(from)), foundSeq }
        : undefined;
    });
    return found;
  }

  /** An accepted row that still has its payload, where `where` says (seq > ?, or seq = ?). */
  private accepted(where: string, seq: number): InboundRow | undefined {
    const row = this.sql
      .exec<Found>(
        `SELECT seq, json_extract(event, '$.envelope.route') AS route,
                json_extract(decision, '$.userAt') AS user_at
           FROM inbox WHERE json_extract(decision, '$.userAt') IS NOT NULL AND event != '{}'
                        AND ${where}`,
        seq,
      )
      .toArray()[0];
    return row?.route ? this.toInbound(row) : undefined;
  }

  /** The highest seq up to which every row above `from` has been triaged (rows above it are few). */
  private triagedUpTo(from: number): number {
    const bounds = this.sql
      .exec<{ untriaged: number | null; newest: number | null }>(
        `SELECT MIN(CASE WHEN state = 'new' THEN seq END) AS untriaged, MAX(seq) AS newest
           FROM inbox WHERE seq > ?`,
        from,
      )
      .one();
    const upTo = bounds.untriaged !== null ? bounds.untriaged - 1 : (bounds.newest ?? from);
    return Math.max(from, upTo);
  }

  private toInbound(row: Found): InboundRow {
    return {
      seq: row.seq,
      route: JSON.parse(row.route!) as ReplyRoute,
      userAt: Number(row.user_at),
      // Read when asked (the sweep, before it clears payloads), not when the row was found: it
      // may have settled since.
      payloadExpired: (now) => {
        const current = this.sql
          .exec<{ state: string; settled_at: number | null }>(
            `SELECT state, settled_at FROM ${EVENTS} WHERE seq = ?`,
            row.seq,
          )
          .toArray()[0];
        return (
          current?.state === "settled" &&
          current.settled_at !== null &&
          current.settled_at < now - this.payloadMs
        );
      },
    };
  }
}
