import {
  keyValueVersionRecord,
  migrate,
  type SchemaHost,
  type SchemaMigration,
} from "../lib/migrate.ts";
import { SESSION_FRESH_SCHEMA } from "./schema-fresh.ts";
import { ROW_CUT_MIGRATIONS } from "./schema-row-cuts.ts";

export type { SchemaHost, SchemaMigration } from "../lib/migrate.ts";

/**
 * The SessionDO's SQLite schema, as an ordered list of versioned migrations run by the migrator all
 * Durable Objects share (../lib/migrate.ts). The version reached is kept in `meta.schemaVersion`.
 */

/**
 * HOW TO CHANGE THE SCHEMA: append `{ version: <last + 1>, why, statements: [...] }` at the end
 * (the list's tail, steps 15 on, is ROW_CUT_MIGRATIONS in schema-row-cuts.ts: append there, or in
 * a file of its own spread after it, to keep files short), and bring SESSION_FRESH_SCHEMA
 * (schema-fresh.ts: what a new object creates) to the same tables.
 * - New table or index: `CREATE TABLE …` / `CREATE INDEX …`.
 * - New column: `ALTER TABLE t ADD COLUMN c <type> NOT NULL DEFAULT <value>` (SQLite needs a
 *   default for NOT NULL), and read it in the table's store with a fallback for rows written before.
 * - Never edit or reorder an earlier step; objects in production have already run it.
 * - Add the old shape to test/durable-objects/schema-migration.test.ts if the step rewrites data.
 */
/**
 * BOUNDS — every table has one, enforced by the retention sweep (retention.ts, which states them in
 * full) and tested in test/durable-objects/retention.test.ts:
 *   inbox          unsettled events + tombstones for 48 h (payload cleared after 1 h); inbox_alias 48 h
 *   outbox         chunks in delivery + sent for 48 h + dead letters for session.maintenance.pruneAfter
 *                  (30 d), at most session.maintenance.maxEntries (500)
 *   runs           current session's newest maxEntries (older folded into meta foldedRuns:<id>) +
 *                  earlier sessions' for 48 h after finishing (once mirrored — mirror_stamp at
 *                  most the watermark's runStamp, step 18, mirror/watermark.ts —; at once
 *                  without Postgres)
 *   transcript     the model's context (compaction) + rows awaiting the mirror; compacted/earlier rows go
 *                  once mirrored (seq at most mirrorWatermark.transcriptSeq), or after
 *                  session.maintenance.resetArchiveRetention (30 d) without Postgres
 *   meta           fixed keys + the current session's summary:/foldedRuns: + progress:<seq> of unsettled events
 *   group_history  at most historyLimit (50), emptied by each run
 *   (metrics_pending, steps 3–8: now meta metricsPending, one map emptied by each batch)
 *   model_calls    48 h, and only once mirrored (mirror_stamp at most mirrorWatermark.callStamp; the sweep
 *                  folds the current session's into meta spend:<sessionId>); an unfinished run's
 *                  calls stay until it ends (its usage is summed from them: run/run-usage.ts)
 *   exec_calls     (step 7) running commands + finished ones for tools.exec.cleanupMs (30 min), at most 50
 *                  finished (exec-store.ts prunes on every poll pass)
 *   responses      (step 13) the newest MAX_RESPONSES (100), none older than RESPONSE_RETENTION_MS (30 d)
 *   (in memory, open-rows.ts: the keys of open inbox events and outbox chunks, from step 19 where
 *   the inbox_open/outbox_open indexes were; a settled key leaves at the next read that finds it)
 *   (an event its run's end settled, step 21, is read settled from runs.events_reply: the sweep
 *   writes it settled an hour on, or before deleting the run; inbox/settled-by-run.ts)
 */
export const SESSION_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "initial tables",
    // IF NOT EXISTS: objects created before versioned migrations may hold some of these already.
    statements: [
      `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      // Every accepted event. Rows outlive processing as dedup tombstones (payload cleared), for at
      // least TOMBSTONE_MS, which is longer than any platform's retry window.
      `CREATE TABLE IF NOT EXISTS inbox (
         seq INTEGER PRIMARY KEY AUTOINCREMENT,
         dedup_key TEXT NOT NULL UNIQUE,
         event TEXT NOT NULL,
         state TEXT NOT NULL,
         run_id TEXT,
         prepared TEXT,
         reply TEXT,
         received_at INTEGER NOT NULL,
         settled_at INTEGER)`,
      `CREATE INDEX IF NOT EXISTS inbox_state ON inbox(state, seq)`,
      `CREATE TABLE IF NOT EXISTS inbox_alias (alias TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS runs (
         run_id TEXT PRIMARY KEY,
         session_id TEXT NOT NULL,
         state TEXT NOT NULL,
         route TEXT NOT NULL,
         model_ref TEXT,
         steps INTEGER NOT NULL DEFAULT 0,
         input_tokens INTEGER NOT NULL DEFAULT 0,
         output_tokens INTEGER NOT NULL DEFAULT 0,
         cache_read_tokens INTEGER NOT NULL DEFAULT 0,
         cache_write_tokens INTEGER NOT NULL DEFAULT 0,
         progress_state TEXT NOT NULL DEFAULT '{}',
         options TEXT NOT NULL DEFAULT '{}',
         started_at INTEGER NOT NULL,
         finished_at INTEGER,
         mirrored INTEGER NOT NULL DEFAULT 0)`,
      `CREATE TABLE IF NOT EXISTS transcript (
         seq INTEGER PRIMARY KEY AUTOINCREMENT,
         session_id TEXT NOT NULL,
         run_id TEXT,
         role TEXT NOT NULL,
         message TEXT NOT NULL,
         created_at INTEGER NOT NULL,
         compacted INTEGER NOT NULL DEFAULT 0,
         mirrored INTEGER NOT NULL DEFAULT 0)`,
      `CREATE INDEX IF NOT EXISTS transcript_session ON transcript(session_id, seq)`,
      `CREATE INDEX IF NOT EXISTS transcript_unmirrored ON transcript(mirrored, seq)`,
      `CREATE TABLE IF NOT EXISTS outbox (
         id TEXT PRIMARY KEY,
         run_id TEXT,
         route TEXT NOT NULL,
         text TEXT NOT NULL,
         chunk_index INTEGER NOT NULL DEFAULT 0,
         chunk_count INTEGER NOT NULL DEFAULT 1,
         state TEXT NOT NULL,
         attempts INTEGER NOT NULL DEFAULT 0,
         next_at INTEGER NOT NULL,
         platform_id TEXT,
         last_error TEXT,
         created_at INTEGER NOT NULL,
         settled_at INTEGER)`,
      `CREATE INDEX IF NOT EXISTS outbox_due ON outbox(state, next_at)`,
      // Un-mentioned group messages kept as context for the next triggered run.
      `CREATE TABLE IF NOT EXISTS group_history (
         seq INTEGER PRIMARY KEY AUTOINCREMENT,
         sender TEXT NOT NULL,
         text TEXT NOT NULL,
         at INTEGER NOT NULL)`,
    ],
  },
  {
    version: 2,
    why: "bounded retries per event and bounded resumes per run",
    statements: [
      // Transient failures of this event in triage or run setup; past the bound it is dead-lettered.
      `ALTER TABLE inbox ADD COLUMN failures INTEGER NOT NULL DEFAULT 0`,
      // Why the event was dead-lettered (permanent error or retries exhausted); null otherwise.
      `ALTER TABLE inbox ADD COLUMN dead_reason TEXT`,
      // How often the run was picked up again after its alarm pass ended (eviction, crash, split).
      `ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0`,
    ],
  },
  {
    version: 3,
    why: "durable metrics counters, handed to the metrics shards in batches (session/metrics.ts)",
    statements: [
      `CREATE TABLE IF NOT EXISTS metrics_pending (series TEXT PRIMARY KEY, value REAL NOT NULL)`,
    ],
  },
  {
    version: 4,
    why: "one row per model call (metering), written before the mirror copies it to Postgres",
    statements: [
      // Owned by model-calls.ts. outcome: ok | error. mirrored: copied to Postgres model_calls.
      `CREATE TABLE IF NOT EXISTS model_calls (
         id TEXT PRIMARY KEY,
         run_id TEXT,
         session_id TEXT NOT NULL,
         kind TEXT NOT NULL,
         provider TEXT NOT NULL,
         model TEXT NOT NULL,
         channel TEXT,
         sender_id TEXT,
         input_tokens INTEGER NOT NULL DEFAULT 0,
         output_tokens INTEGER NOT NULL DEFAULT 0,
         cache_read_tokens INTEGER NOT NULL DEFAULT 0,
         cache_write_tokens INTEGER NOT NULL DEFAULT 0,
         cost_usd REAL NOT NULL DEFAULT 0,
         outcome TEXT NOT NULL,
         duration_ms INTEGER NOT NULL DEFAULT 0,
         at INTEGER NOT NULL,
         mirrored INTEGER NOT NULL DEFAULT 0)`,
      `CREATE INDEX IF NOT EXISTS model_calls_unmirrored ON model_calls(mirrored, at)`,
    ],
  },
  {
    version: 5,
    why: "when a reply chunk was first sent: a lost send is reconciled against what the platform holds from then on, so an identical earlier message is not taken for it",
    // Null until the first attempt (and for rows written before this step: queued time stands in).
    statements: [`ALTER TABLE outbox ADD COLUMN first_attempt_at INTEGER`],
  },
  {
    version: 6,
    why: "dedup keys kept past the 48 h tombstone for platforms whose signatures carry no timestamp (Twilio SMS): a replayed request stays a duplicate until `until`",
    statements: [
      `CREATE TABLE IF NOT EXISTS replay_guard (dedup_key TEXT PRIMARY KEY, until INTEGER NOT NULL)`,
    ],
  },
  {
    version: 7,
    why: "the session's sandbox commands (exec), keyed by tool-call id: recorded before the sandbox is asked and after it answers, so a resumed run never starts one twice",
    statements: [
      `CREATE TABLE IF NOT EXISTS exec_calls (
         exec_id TEXT PRIMARY KEY,
         call_id TEXT NOT NULL,
         session_id TEXT NOT NULL,
         scope TEXT NOT NULL,
         state TEXT NOT NULL,
         command TEXT NOT NULL,
         request TEXT NOT NULL,
         background INTEGER NOT NULL DEFAULT 0,
         notify INTEGER NOT NULL DEFAULT 0,
         result TEXT,
         output_seen INTEGER NOT NULL DEFAULT 0,
         next_poll_at INTEGER,
         poll_count INTEGER NOT NULL DEFAULT 0,
         created_at INTEGER NOT NULL,
         finished_at INTEGER)`,
      `CREATE INDEX IF NOT EXISTS exec_calls_poll ON exec_calls(next_poll_at)`,
      `CREATE INDEX IF NOT EXISTS exec_calls_call ON exec_calls(call_id)`,
    ],
  },
  {
    version: 8,
    why: "what triage decided for each event (refused and why, the config key that would change it; pairing; kept as context; accepted), kept with its tombstone so an operator or the simulator can ask why an event got no answer",
    // JSON TriageDecision (storage-rows.ts); null until triage has looked at the event, and for rows written before this step.
    statements: [`ALTER TABLE inbox ADD COLUMN decision TEXT`],
  },
  {
    version: 9,
    why: "pending metrics as one JSON row in meta (upkeep/metrics-store.ts): a count writes one row, where a row per series cost a histogram observation a dozen",
    statements: [
      `INSERT OR REPLACE INTO meta(key, value)
         SELECT 'metricsPending', json_group_object(series, value) FROM metrics_pending
         WHERE value != 0 HAVING count(*) > 0`,
      `DROP TABLE metrics_pending`,
    ],
  },
  {
    version: 10,
    why: "fewer rows written per message (issue 19 step 9): an index entry is a billed row on every insert and on every UPDATE of an indexed column",
    statements: [
      // The inbox's open events only: a settled event (each one, for 48 h as its tombstone) leaves
      // the index instead of being written into it again. Queries name `state != 'settled'`.
      `DROP INDEX IF EXISTS inbox_state`,
      `CREATE INDEX IF NOT EXISTS inbox_open ON inbox(state, seq) WHERE state != 'settled'`,
      // Likewise the outbox's chunks in delivery (a sent chunk leaves it).
      `DROP INDEX IF EXISTS outbox_due`,
      `CREATE INDEX IF NOT EXISTS outbox_open ON outbox(created_at) WHERE state IN ('pending', 'sending', 'unknown')`,
      // What the mirror has copied of the transcript is one watermark in meta (transcript-store.ts),
      // not a flag and an index entry per row: every row up to the first one not yet mirrored.
      `INSERT OR REPLACE INTO meta(key, value) SELECT 'transcriptMirroredSeq', CAST(seq AS TEXT) FROM
         (SELECT COALESCE((SELECT MIN(seq) - 1 FROM transcript WHERE mirrored = 0), (SELECT MAX(seq) FROM transcript), 0) AS seq)
       WHERE seq > 0`,
      `DROP INDEX IF EXISTS transcript_unmirrored`,
      `ALTER TABLE transcript DROP COLUMN mirrored`,
      // Read only by the mirror, over a table bounded to 48 h: a scan, not an entry per call; and
      // keyed by the call id alone (no rowid): one row per call where there were three.
      `DROP INDEX IF EXISTS model_calls_unmirrored`,
      `CREATE TABLE model_calls_v10 (
         id TEXT PRIMARY KEY,
         run_id TEXT,
         session_id TEXT NOT NULL,
         kind TEXT NOT NULL,
         provider TEXT NOT NULL,
         model TEXT NOT NULL,
         channel TEXT,
         sender_id TEXT,
         input_tokens INTEGER NOT NULL DEFAULT 0,
         output_tokens INTEGER NOT NULL DEFAULT 0,
         cache_read_tokens INTEGER NOT NULL DEFAULT 0,
         cache_write_tokens INTEGER NOT NULL DEFAULT 0,
         cost_usd REAL NOT NULL DEFAULT 0,
         outcome TEXT NOT NULL,
         duration_ms INTEGER NOT NULL DEFAULT 0,
         at INTEGER NOT NULL,
         mirrored INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
      `INSERT INTO model_calls_v10 SELECT id, run_id, session_id, kind, provider, model, channel, sender_id,
         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, outcome, duration_ms, at, mirrored
       FROM model_calls`,
      `DROP TABLE model_calls`,
      `ALTER TABLE model_calls_v10 RENAME TO model_calls`,
      // Keyed by the alias alone: a table without a rowid writes one row per alias, not two.
      `CREATE TABLE inbox_alias_v10 (alias TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID`,
      `INSERT INTO inbox_alias_v10(alias, seq, at) SELECT alias, seq, at FROM inbox_alias`,
      `DROP TABLE inbox_alias`,
      `ALTER TABLE inbox_alias_v10 RENAME TO inbox_alias`,
      // The same for meta: each key's first write was two rows (the row and its key's index).
      `CREATE TABLE meta_v10 (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
      `INSERT INTO meta_v10(key, value) SELECT key, value FROM meta`,
      `DROP TABLE meta`,
      `ALTER TABLE meta_v10 RENAME TO meta`,
      // Metrics batches are numbered by their flush time (upkeep/metrics.ts): the last one is kept
      // with its time in one key where two were kept.
      `INSERT OR REPLACE INTO meta(key, value) SELECT 'metricsFlushed', json_object(
         'no', CAST(COALESCE((SELECT value FROM meta WHERE key = 'metricsBatchNo'), '0') AS INTEGER),
         'at', CAST(COALESCE((SELECT value FROM meta WHERE key = 'metricsFlushedAt'), '0') AS INTEGER))
       WHERE EXISTS (SELECT 1 FROM meta WHERE key IN ('metricsBatchNo', 'metricsFlushedAt'))`,
      `DELETE FROM meta WHERE key IN ('metricsBatchNo', 'metricsFlushedAt')`,
    ],
  },
  {
    version: 11,
    why: "a reply may carry a file (issue 22, media out): the row keeps a reference to the bytes in the media store (never the bytes), so a file is recorded before it is sent like any chunk",
    // JSON OutboundFileRef (functions/media/outbound.ts); null for a text chunk and for rows written before this step.
    statements: [`ALTER TABLE outbox ADD COLUMN media TEXT`],
  },
  {
    version: 12,
    why: "fewer rows written per message (issue 19 item 9): the open-events and open-chunks indexes are keyed on what does not change while an event or chunk is open, so its steps (new → queued → taken, pending → sending) rewrite no index entry; only its insert and its settling (which leaves the index, unbilled) touch it; and a run keeps its estimated platform cost in its own row",
    statements: [
      // settled_at is set exactly when an event or chunk settles (InboxStore, OutboxStore), so
      // `settled_at IS NULL` names the open ones; rows from before this step are brought in line.
      `UPDATE inbox SET settled_at = COALESCE(received_at, 0) WHERE state = 'settled' AND settled_at IS NULL`,
      `UPDATE inbox SET settled_at = NULL WHERE state != 'settled' AND settled_at IS NOT NULL`,
      `DROP INDEX IF EXISTS inbox_open`,
      `CREATE INDEX inbox_open ON inbox(seq) WHERE settled_at IS NULL`,
      `UPDATE outbox SET settled_at = created_at WHERE state IN ('sent', 'dead') AND settled_at IS NULL`,
      `UPDATE outbox SET settled_at = NULL WHERE state NOT IN ('sent', 'dead') AND settled_at IS NOT NULL`,
      `DROP INDEX IF EXISTS outbox_open`,
      `CREATE INDEX outbox_open ON outbox(created_at) WHERE settled_at IS NULL`,
      // A run's estimated platform cost, written with its end (run/finish.ts), where it was a second
      // write of meta spend:<id> per run; what earlier runs added to spend stays there.
      `ALTER TABLE runs ADD COLUMN platform_usd REAL NOT NULL DEFAULT 0`,
    ],
  },
  {
    version: 13,
    why: "/v1/responses (issue 24 item 9): each response's id, who may continue it and how it ended, so previous_response_id continues this session and a function call's output resumes its run",
    statements: [
      `CREATE TABLE responses (
         id TEXT PRIMARY KEY,
         dedup_key TEXT NOT NULL UNIQUE,
         seq INTEGER NOT NULL,
         scope TEXT NOT NULL,
         previous_id TEXT,
         run_id TEXT,
         status TEXT NOT NULL,
         outcome TEXT,
         created_at INTEGER NOT NULL,
         finished_at INTEGER) WITHOUT ROWID`,
    ],
  },
  {
    version: 14,
    why: "fewer rows written per message (issue 19 item 9): AUTOINCREMENT writes the table's sqlite_sequence row on every insert, a billed row per event and per transcript row; the seqs stay unique without it (a new row takes the seq above the newest row and above a floor kept in meta for when the newest rows are deleted)",
    statements: [
      // The highest seq given so far, when rows above what is left were deleted (read before the
      // rebuild drops the table's sqlite_sequence row).
      ...(["inbox", "transcript"] as const).map(
        (table) =>
          `INSERT OR REPLACE INTO meta(key, value) SELECT '${table}SeqFloor', CAST(seq AS TEXT) FROM sqlite_sequence
             WHERE name = '${table}' AND seq > COALESCE((SELECT MAX(seq) FROM ${table}), 0)`,
      ),
      `CREATE TABLE inbox_v14 (
         seq INTEGER PRIMARY KEY,
         dedup_key TEXT NOT NULL UNIQUE,
         event TEXT NOT NULL,
         state TEXT NOT NULL,
         run_id TEXT,
         prepared TEXT,
         reply TEXT,
         received_at INTEGER NOT NULL,
         settled_at INTEGER,
         failures INTEGER NOT NULL DEFAULT 0,
         dead_reason TEXT,
         decision TEXT)`,
      `INSERT INTO inbox_v14(seq, dedup_key, event, state, run_id, prepared, reply, received_at, settled_at, failures, dead_reason, decision)
         SELECT seq, dedup_key, event, state, run_id, prepared, reply, received_at, settled_at, failures, dead_reason, decision FROM inbox`,
      `DROP TABLE inbox`,
      `ALTER TABLE inbox_v14 RENAME TO inbox`,
      `CREATE INDEX inbox_open ON inbox(seq) WHERE settled_at IS NULL`,
      `CREATE TABLE transcript_v14 (
         seq INTEGER PRIMARY KEY,
         session_id TEXT NOT NULL,
         run_id TEXT,
         role TEXT NOT NULL,
         message TEXT NOT NULL,
         created_at INTEGER NOT NULL,
         compacted INTEGER NOT NULL DEFAULT 0)`,
      `INSERT INTO transcript_v14(seq, session_id, run_id, role, message, created_at, compacted)
         SELECT seq, session_id, run_id, role, message, created_at, compacted FROM transcript`,
      `DROP TABLE transcript`,
      `ALTER TABLE transcript_v14 RENAME TO transcript`,
      `CREATE INDEX transcript_session ON transcript(session_id, seq)`,
    ],
  },
  // Steps 15 on: schema-row-cuts.ts (one list, in order).
  ...ROW_CUT_MIGRATIONS,
];

export const SESSION_SCHEMA_VERSION = SESSION_MIGRATIONS.at(-1)!.version;

const SESSION_VERSION = keyValueVersionRecord("meta", "schemaVersion");

/** The version an object's tables are at: 0 for a new object (or one from before versioning). */
export function storedSchemaVersion(sql: SqlStorage): number {
  return SESSION_VERSION.read(sql);
}

/** Brings a SessionDO's tables up to date (lib/migrate.ts; the version lives in meta.schemaVersion). */
export function migrateSessionSchema(
  host: SchemaHost,
  migrations: readonly SchemaMigration[] = SESSION_MIGRATIONS,
): number {
  return migrate(host, {
    name: "SessionDO",
    migrations,
    record: SESSION_VERSION,
    // Only for the schema as this code ends it: a test that stops at an earlier step replays steps.
    ...(migrations === SESSION_MIGRATIONS
      ? { fresh: { absentTable: "meta", statements: SESSION_FRESH_SCHEMA } }
      : {}),
  });
}
