import type { SchemaMigration } from "../lib/migrate.ts";

/**
 * SessionDO schema steps 15 on (schema.ts appends them to SESSION_MIGRATIONS, whose rules apply:
 * append only, never edit or reorder a step; bring schema-fresh.ts to the same tables). Issue 19
 * item 9's third, fourth and fifth rounds of fewer rows written per message; each step names
 * the rows it saves.
 */
export const ROW_CUT_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 15,
    why: "fewer rows written per message (issue 19 item 9): runs and outbox are keyed by their id alone (WITHOUT ROWID), where a rowid table wrote the row and its key's index entry on every insert (a billed row per run and per reply chunk); a chunk's place in delivery order, which the rowid gave, is its own column",
    statements: [
      `CREATE TABLE runs_v15 (
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
         mirrored INTEGER NOT NULL DEFAULT 0,
         resumes INTEGER NOT NULL DEFAULT 0,
         platform_usd REAL NOT NULL DEFAULT 0) WITHOUT ROWID`,
      `INSERT INTO runs_v15 SELECT run_id, session_id, state, route, model_ref, steps, input_tokens, output_tokens,
         cache_read_tokens, cache_write_tokens, progress_state, options, started_at, finished_at, mirrored, resumes, platform_usd
       FROM runs`,
      `DROP TABLE runs`,
      `ALTER TABLE runs_v15 RENAME TO runs`,
      // ord: the chunk's place among chunks queued in the same millisecond (OutboxStore.insert);
      // rows from before this step keep their rowid's order.
      `CREATE TABLE outbox_v15 (
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
         settled_at INTEGER,
         first_attempt_at INTEGER,
         media TEXT,
         ord INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
      `INSERT INTO outbox_v15 SELECT id, run_id, route, text, chunk_index, chunk_count, state, attempts, next_at,
         platform_id, last_error, created_at, settled_at, first_attempt_at, media, rowid
       FROM outbox`,
      `DROP TABLE outbox`,
      `ALTER TABLE outbox_v15 RENAME TO outbox`,
      `CREATE INDEX outbox_open ON outbox(created_at, ord) WHERE settled_at IS NULL`,
    ],
  },
  {
    version: 16,
    why: "fewer rows written per message (issue 19 item 9): a session's spend is summed from its model_calls rows instead of a meta row rewritten with each call (a billed row per model call); the sweep folds the calls it deletes into meta spend",
    statements: [
      // Rows already here were added to meta spend when they were recorded (1): not summed again.
      `ALTER TABLE model_calls ADD COLUMN in_spend INTEGER NOT NULL DEFAULT 1`,
      // A call billed by time (the browser): its billed ms, summed per kind (null for the others).
      `ALTER TABLE model_calls ADD COLUMN billed_ms INTEGER`,
    ],
  },
  {
    version: 17,
    why: "fewer rows written per message (issue 19 item 9): the transcript's (session_id, seq) index wrote an entry with every row (a billed row per transcript row, two per message); the current session's rows are read by the key's range above a floor kept in meta, written when a session starts",
    // An object's current session has no floor yet (0: its reads scan the table, as a run's
    // reads by run_id always did) until its next session starts.
    statements: [`DROP INDEX IF EXISTS transcript_session`],
  },
  {
    version: 18,
    why: "fewer rows written per message (issue 19 item 9): the mirror marked each run and model call it copied (UPDATE … SET mirrored = 1, a billed row each) besides the transcript's watermark; now runs and calls carry a stamp that only grows (given when a call is recorded and when a run finishes) and one meta row, mirrorWatermark, holds all three watermarks, so a mirror pass writes at most one row",
    statements: [
      // A run is stamped when it finishes (NULL while it runs), a call when it is recorded.
      `ALTER TABLE runs ADD COLUMN mirror_stamp INTEGER`,
      `ALTER TABLE model_calls ADD COLUMN mirror_stamp INTEGER NOT NULL DEFAULT 0`,
      // Rows already copied are covered by any watermark (stamp 0); finished rows not yet copied
      // get distinct stamps 1, 2, … in the order they finished, so the next pass copies each once.
      `UPDATE runs SET mirror_stamp = 0 WHERE mirrored = 1`,
      `UPDATE runs SET mirror_stamp = pending.stamp FROM
         (SELECT run_id, ROW_NUMBER() OVER (ORDER BY COALESCE(finished_at, started_at), run_id) AS stamp
            FROM runs WHERE mirrored = 0 AND state NOT IN ('running', 'waiting')) AS pending
       WHERE runs.run_id = pending.run_id`,
      `UPDATE model_calls SET mirror_stamp = pending.stamp FROM
         (SELECT id, ROW_NUMBER() OVER (ORDER BY at, id) AS stamp FROM model_calls WHERE mirrored = 0) AS pending
       WHERE model_calls.id = pending.id`,
      `ALTER TABLE runs DROP COLUMN mirrored`,
      `ALTER TABLE model_calls DROP COLUMN mirrored`,
      // The transcript's watermark (step 10) moves into the one row, the others at 0.
      `INSERT OR REPLACE INTO meta(key, value) SELECT 'mirrorWatermark',
         json_object('transcriptSeq', CAST(value AS INTEGER), 'runStamp', 0, 'callStamp', 0)
       FROM meta WHERE key = 'transcriptMirroredSeq'`,
      `DELETE FROM meta WHERE key = 'transcriptMirroredSeq'`,
    ],
  },
  {
    version: 19,
    why: "fewer rows written per message (issue 19 item 9): the open-events and open-chunks partial indexes wrote an entry with every event and every reply chunk (two billed rows per message); open rows are read by key from sets of their keys kept in memory instead (open-rows.ts: the inbox's seqs, the outbox's chunk ids), each loaded by one scan per isolate",
    statements: [`DROP INDEX IF EXISTS inbox_open`, `DROP INDEX IF EXISTS outbox_open`],
  },
  {
    version: 20,
    why: "fewer rows written per message (issue 19 item 9): a mirror pass rewrote meta mirrorWatermark (a billed row per message); the watermark is kept exact in memory and stored in rows written anyway: each run's end carries it (mirror_mark, as it was before the run's own rows were copied) and the sweep writes meta mirrorWatermark before it drops rows. A new isolate may copy the rows of the last passes again, which the copy's on-conflict-do-nothing makes harmless",
    // Objects from before this step keep their meta watermark; their runs carry none (NULL).
    statements: [`ALTER TABLE runs ADD COLUMN mirror_mark TEXT`],
  },
  {
    version: 21,
    why: "fewer rows written per message (issue 19 item 9): a run that finished normally settled each of its events with an UPDATE of its own (a billed row per message); its end now records the reply they settle with in the run's row (events_reply), in the UPDATE that records the end, and reads give such a taken event as settled (inbox/settled-by-run.ts). The sweep writes the row settled when it clears its payload, an hour on, or before it deletes the run",
    // Runs that finished before this step settled their events themselves (NULL: nothing derived).
    statements: [`ALTER TABLE runs ADD COLUMN events_reply TEXT`],
  },
];
