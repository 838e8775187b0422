import { SessionStore } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { foldLastInbound } from "../last-inbound.ts";

/**
 * How long a SessionDO keeps what it stores, and the sweep that enforces it. The bound of every
 * table (stated at the schema, schema.ts, and in docs/concepts/reliability.md):
 *  - inbox: events not yet settled, plus settled ones as dedup tombstones for TOMBSTONE_MS (48 h;
 *    their payload is cleared after an hour); inbox_alias likewise 48 h; replay_guard until each
 *    key's `until` (channels whose signatures have no timestamp: Twilio SMS, a year by default).
 *  - outbox: chunks still being delivered, sent chunks for 48 h, dead letters for
 *    `session.maintenance.pruneAfter` (30 d) and at most `maxEntries` (500) of them.
 *  - runs: the current session's newest `maxEntries` runs (older ones are folded into one totals
 *    entry, so /status and the mirror still count them) and earlier sessions' runs for 48 h after
 *    they finish — once mirrored to Postgres, or at once when there is no DATABASE_URL.
 *  - transcript: what the model still sees (bounded by compaction) and rows awaiting the mirror;
 *    compacted rows and earlier sessions' rows go once mirrored, or, without DATABASE_URL, after
 *    `session.maintenance.resetArchiveRetention` (30 d).
 *  - meta: a fixed set of keys, plus the current session's summary and folded totals, plus the
 *    ack-progress state of events not yet settled. Older sessions' entries are dropped.
 *  - group_history: at most the conversation's historyLimit (50), emptied by each run.
 *  - model_calls: 48 h, and only once mirrored when there is a DATABASE_URL (totals: meta spend:<id>);
 *    an unfinished run's calls stay until it ends (its usage is summed from them: run/run-usage.ts).
 *  - metrics: meta metricsPending, one map bounded by the catalogue's labels, emptied by each batch.
 *  - responses: /v1/responses records, the newest 100, none older than 30 d (responses/store.ts).
 */

/** The sweep runs at most this often; an idle object wakes for it only when something expires. */
export const PRUNE_EVERY_MS = 60 * 60 * 1000;

export interface RetentionPolicy {
  /** The session the model is in now; its transcript, summary and recent runs are live data. */
  activeSessionId: string | undefined;
  /** DATABASE_URL is set: transcript and runs go only once the mirror has archived them. */
  archived: boolean;
  deadLetterMs: number;
  maxEntries: number;
  archiveMs: number | false;
}

export function retentionPolicy(s: SessionState): RetentionPolicy {
  const maintenance = s.config.session.maintenance;
  return {
    activeSessionId: s.store.meta.get("sessionId"),
    archived: Boolean(s.env.DATABASE_URL),
    deadLetterMs: maintenance.pruneAfter,
    maxEntries: maintenance.maxEntries,
    archiveMs: maintenance.resetArchiveRetention,
  };
}

/** The sweep, at most every PRUNE_EVERY_MS, in one transaction. */
export function prune(s: SessionState, now = Date.now()): void {
  const last = Number(s.store.meta.get("prunedAt") ?? 0);
  if (now - last < PRUNE_EVERY_MS) return;
  const policy = retentionPolicy(s);
  s.ctx.storage.transactionSync(() => {
    pruneStores(s.store, policy, now);
    s.store.meta.set("prunedAt", String(now));
  });
}

/** Asks every store to apply its bound once (each store states its own; the list above is the sum). */
export function pruneStores(store: SessionStore, policy: RetentionPolicy, now: number): void {
  // Before any row goes: a deleted run takes the mirror's watermark it carried with it.
  store.mirrorMarks.persist();
  // Before the inbox clears payloads: the last inbound message's route is in its payload.
  foldLastInbound(store, now);
  store.inbox.prune(now);
  store.outbox.prune(policy, now);
  store.transcript.prune(policy, now);
  // Before a run goes, the events its end settled are written settled (inbox/settled-by-run.ts).
  store.runs.prune(policy, now, store.outbox.runsInDelivery(), (runIds) =>
    store.inbox.recordSettled(runIds),
  );
  store.modelCalls.prune(policy, now, store.runs.unfinishedIds());
  store.responses.prune(now);
  store.meta.prune(policy.activeSessionId ?? "", store.inbox.unsettledSeqs());
}

/**
 * pruneStores over a bare SqlStorage of an object already migrated (tests reading a live object).
 * Its store knows only the mirror watermark stored (meta, run ends), not one a live store holds in
 * memory, so it may keep rows that store's mirror has copied since: never the reverse.
 */
export function pruneSessionStorage(sql: SqlStorage, policy: RetentionPolicy, now: number): void {
  pruneStores(new SessionStore(sql), policy, now);
}

/**
 * When the sweep next has something to drop (an idle object wakes for it): the oldest tombstone's
 * or dead letter's expiry, or an archive-retention expiry without Postgres — never sooner than
 * PRUNE_EVERY_MS from now.
 */
export function nextPruneAt(
  sql: SqlStorage | SessionStore,
  policy: RetentionPolicy,
  now: number,
): number | undefined {
  const store = sql instanceof SessionStore ? sql : new SessionStore(sql);
  const due = [
    store.inbox.pruneDueAt(),
    store.outbox.pruneDueAt(policy),
    store.transcript.pruneDueAt(policy),
  ].filter((at): at is number => at !== undefined);
  return due.length ? Math.max(now + PRUNE_EVERY_MS, Math.min(...due)) : undefined;
}
