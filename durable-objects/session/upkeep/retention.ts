import { TOMBSTONE_MS } from "../storage.ts";
import type { SessionState } from "../state.ts";

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
 *  - model_calls: 48 h, and only once mirrored when there is a DATABASE_URL (totals: meta spend:<id>).
 */

/** The sweep runs at most this often; an idle object wakes for it only when something expires. */
export const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** A settled event's payload is cleared after this; its dedup key and reply stay as the tombstone. */
const PAYLOAD_MS = 60 * 60 * 1000;

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
    activeSessionId: s.store.getMeta("sessionId"),
    archived: Boolean(s.env.DATABASE_URL),
    deadLetterMs: maintenance.pruneAfter,
    maxEntries: maintenance.maxEntries,
    archiveMs: maintenance.resetArchiveRetention,
  };
}

/** The sweep, at most every PRUNE_EVERY_MS, in one transaction. */
export function prune(s: SessionState, now = Date.now()): void {
  const last = Number(s.store.getMeta("prunedAt") ?? 0);
  if (now - last < PRUNE_EVERY_MS) return;
  const policy = retentionPolicy(s);
  s.ctx.storage.transactionSync(() => {
    pruneSessionStorage(s.ctx.storage.sql, policy, now);
    s.store.setMeta("prunedAt", String(now));
  });
}

/** Applies every bound above once. */
export function pruneSessionStorage(sql: SqlStorage, policy: RetentionPolicy, now: number): void {
  const active = policy.activeSessionId ?? "";
  const archivedOrNone = policy.archived ? 0 : 1;

  sql.exec(
    `UPDATE inbox SET event = '{}' WHERE state = 'settled' AND event != '{}' AND settled_at < ?`,
    now - PAYLOAD_MS,
  );
  sql.exec(`DELETE FROM inbox WHERE state = 'settled' AND settled_at < ?`, now - TOMBSTONE_MS);
  sql.exec(`DELETE FROM inbox_alias WHERE at < ?`, now - TOMBSTONE_MS);
  sql.exec(`DELETE FROM replay_guard WHERE until < ?`, now);

  sql.exec(`DELETE FROM outbox WHERE state = 'sent' AND settled_at < ?`, now - TOMBSTONE_MS);
  sql.exec(
    `DELETE FROM outbox WHERE state = 'dead' AND (COALESCE(settled_at, created_at) < ? OR id NOT IN
       (SELECT id FROM outbox WHERE state = 'dead' ORDER BY COALESCE(settled_at, created_at) DESC, rowid DESC LIMIT ?))`,
    now - policy.deadLetterMs,
    policy.maxEntries,
  );

  if (policy.archived) {
    sql.exec(
      `DELETE FROM transcript WHERE mirrored = 1 AND (compacted = 1 OR session_id != ?)`,
      active,
    );
  } else if (policy.archiveMs !== false) {
    sql.exec(
      `DELETE FROM transcript WHERE (compacted = 1 OR session_id != ?) AND created_at < ?`,
      active,
      now - policy.archiveMs,
    );
  }

  sql.exec(
    `DELETE FROM runs WHERE (mirrored = 1 OR ? = 1) AND state != 'running' AND session_id != ? AND finished_at < ?`,
    archivedOrNone,
    active,
    now - TOMBSTONE_MS,
  );
  if (policy.activeSessionId) foldOldRuns(sql, policy.activeSessionId, policy, archivedOrNone);

  // Per-call metering rows: the session's totals are kept in meta spend:<id>, Postgres has the rows.
  sql.exec(
    `DELETE FROM model_calls WHERE (mirrored = 1 OR ? = 1) AND at < ?`,
    archivedOrNone,
    now - TOMBSTONE_MS,
  );

  sql.exec(
    `DELETE FROM meta WHERE (key LIKE 'summary:%' OR key LIKE 'foldedRuns:%' OR key LIKE 'spend:%') AND key NOT IN (?, ?, ?)`,
    `summary:${active}`,
    `foldedRuns:${active}`,
    `spend:${active}`,
  );
  sql.exec(
    `DELETE FROM meta WHERE key LIKE 'progress:%' AND CAST(substr(key, 10) AS INTEGER) NOT IN (SELECT seq FROM inbox WHERE state != 'settled')`,
  );
}

/**
 * Keeps the current session's newest `maxEntries` runs; older finished ones (archived, and with
 * no reply chunk still in delivery) are summed into `foldedRuns:<sessionId>` and deleted.
 */
function foldOldRuns(
  sql: SqlStorage,
  sessionId: string,
  policy: RetentionPolicy,
  archivedOrNone: number,
): void {
  const old = sql
    .exec<{ run_id: string; input_tokens: number; output_tokens: number }>(
      `SELECT run_id, input_tokens, output_tokens FROM runs
       WHERE session_id = ? AND state != 'running' AND (mirrored = 1 OR ? = 1)
         AND run_id NOT IN (SELECT run_id FROM runs WHERE session_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?)
         AND run_id NOT IN (SELECT run_id FROM outbox WHERE run_id IS NOT NULL AND state NOT IN ('sent', 'dead'))`,
      sessionId,
      archivedOrNone,
      sessionId,
      policy.maxEntries,
    )
    .toArray();
  if (!old.length) return;
  const key = `foldedRuns:${sessionId}`;
  const raw = sql
    .exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key)
    .toArray()[0]?.value;
  const totals = raw
    ? (JSON.parse(raw) as FoldedRuns)
    : { inputTokens: 0, outputTokens: 0, runs: 0 };
  for (const run of old) {
    totals.inputTokens += run.input_tokens;
    totals.outputTokens += run.output_tokens;
    totals.runs += 1;
    sql.exec(`DELETE FROM runs WHERE run_id = ?`, run.run_id);
  }
  sql.exec(
    `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
    key,
    JSON.stringify(totals),
  );
}

/** Usage of the current session's runs that were folded away (storage.ts adds it to the live ones). */
export interface FoldedRuns {
  inputTokens: number;
  outputTokens: number;
  runs: number;
}

/**
 * When the sweep next has something to drop (an idle object wakes for it): the oldest tombstone's
 * or dead letter's expiry, or an archive-retention expiry without Postgres — never sooner than
 * PRUNE_EVERY_MS from now.
 */
export function nextPruneAt(
  sql: SqlStorage,
  policy: RetentionPolicy,
  now: number,
): number | undefined {
  const due: number[] = [];
  const first = (query: string, ...args: unknown[]) =>
    sql.exec<{ at: number | null }>(query, ...args).one().at ?? undefined;
  const settled = first(`SELECT MIN(settled_at) AS at FROM inbox WHERE state = 'settled'`);
  if (settled !== undefined) due.push(settled + TOMBSTONE_MS);
  const sent = first(`SELECT MIN(settled_at) AS at FROM outbox WHERE state = 'sent'`);
  if (sent !== undefined) due.push(sent + TOMBSTONE_MS);
  const guard = first(`SELECT MIN(until) AS at FROM replay_guard`);
  if (guard !== undefined) due.push(guard + 1);
  const dead = first(
    `SELECT MIN(COALESCE(settled_at, created_at)) AS at FROM outbox WHERE state = 'dead'`,
  );
  if (dead !== undefined) due.push(dead + policy.deadLetterMs);
  if (!policy.archived && policy.archiveMs !== false) {
    const archive = first(
      `SELECT MIN(created_at) AS at FROM transcript WHERE compacted = 1 OR session_id != ?`,
      policy.activeSessionId ?? "",
    );
    if (archive !== undefined) due.push(archive + policy.archiveMs);
  }
  return due.length ? Math.max(now + PRUNE_EVERY_MS, Math.min(...due)) : undefined;
}
