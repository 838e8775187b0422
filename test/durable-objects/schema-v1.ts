/**
 * The tables exactly as version 1 created them (before versioned migrations existed), for the
 * schema tests (schema-migration.test.ts, schema-rows.test.ts). Kept here verbatim, not imported
 * from the schema: this is the shape of objects already in production.
 */
const V1_TABLES = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
  `CREATE TABLE inbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, dedup_key TEXT NOT NULL UNIQUE, event TEXT NOT NULL, state TEXT NOT NULL,
     run_id TEXT, prepared TEXT, reply TEXT, received_at INTEGER NOT NULL, settled_at INTEGER)`,
  `CREATE INDEX inbox_state ON inbox(state, seq)`,
  `CREATE TABLE inbox_alias (alias TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL)`,
  `CREATE TABLE runs (run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, state TEXT NOT NULL, route TEXT NOT NULL, model_ref TEXT,
     steps INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
     cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0, progress_state TEXT NOT NULL DEFAULT '{}',
     options TEXT NOT NULL DEFAULT '{}', started_at INTEGER NOT NULL, finished_at INTEGER, mirrored INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE transcript (seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, run_id TEXT, role TEXT NOT NULL,
     message TEXT NOT NULL, created_at INTEGER NOT NULL, compacted INTEGER NOT NULL DEFAULT 0, mirrored INTEGER NOT NULL DEFAULT 0)`,
  `CREATE INDEX transcript_session ON transcript(session_id, seq)`,
  `CREATE INDEX transcript_unmirrored ON transcript(mirrored, seq)`,
  `CREATE TABLE outbox (id TEXT PRIMARY KEY, run_id TEXT, route TEXT NOT NULL, text TEXT NOT NULL, chunk_index INTEGER NOT NULL DEFAULT 0,
     chunk_count INTEGER NOT NULL DEFAULT 1, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL,
     platform_id TEXT, last_error TEXT, created_at INTEGER NOT NULL, settled_at INTEGER)`,
  `CREATE INDEX outbox_due ON outbox(state, next_at)`,
  `CREATE TABLE group_history (seq INTEGER PRIMARY KEY AUTOINCREMENT, sender TEXT NOT NULL, text TEXT NOT NULL, at INTEGER NOT NULL)`,
];

export const ROUTE = JSON.stringify({ channel: "testchan", to: "u1" });
export const EVENT = JSON.stringify({
  envelope: { dedupKey: "testchan:1", text: "hello" },
  agentId: "main",
  sessionKey: "agent:main:old",
});

/** Replaces the object's tables with a version-1 object holding one row in every table. */
export function recreateVersion1Object(sql: SqlStorage): void {
  const tables = sql
    .exec<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'`,
    )
    .toArray();
  for (const { name } of tables) sql.exec(`DROP TABLE ${name}`);
  for (const statement of V1_TABLES) sql.exec(statement);
  sql.exec(
    `INSERT INTO meta(key, value) VALUES ('schemaVersion', '1'), ('sessionId', 's-old'), ('summary:s-old', 'earlier summary')`,
  );
  sql.exec(
    `INSERT INTO inbox(dedup_key, event, state, run_id, received_at) VALUES ('testchan:1', ?, 'taken', 'run-1', 1000)`,
    EVENT,
  );
  sql.exec(`INSERT INTO inbox_alias(alias, seq, at) VALUES ('alias:1', 1, 1000)`);
  sql.exec(
    `INSERT INTO runs(run_id, session_id, state, route, steps, input_tokens, started_at) VALUES ('run-1', 's-old', 'running', ?, 3, 120, 1000)`,
    ROUTE,
  );
  sql.exec(
    `INSERT INTO transcript(session_id, run_id, role, message, created_at) VALUES ('s-old', 'run-1', 'user', ?, 1000)`,
    JSON.stringify({ role: "user", content: "hello" }),
  );
  sql.exec(
    `INSERT INTO outbox(id, run_id, route, text, state, next_at, created_at) VALUES ('notice:1:0', NULL, ?, 'a notice', 'pending', 1000, 1000)`,
    ROUTE,
  );
  sql.exec(`INSERT INTO group_history(sender, text, at) VALUES ('Ann (U1)', 'earlier', 900)`);
}

export function counts(sql: SqlStorage): Record<string, number> {
  const out: Record<string, number> = {};
  for (const table of [
    "meta",
    "inbox",
    "inbox_alias",
    "runs",
    "transcript",
    "outbox",
    "group_history",
  ]) {
    out[table] = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;
  }
  return out;
}

/**
 * Rows as the mirror left them before schema step 18 (an object at step 17): a `mirrored` flag on
 * each run and model call, and the transcript's watermark in meta transcriptMirroredSeq. Copied:
 * run r-copied and call c-copied, transcript row 1. Not yet: runs r-a, r-b and calls c-a, c-b
 * (each pair finished or recorded in the same millisecond); run-1 still running, r-wait waiting.
 */
export function insertStep17MirrorRows(sql: SqlStorage): void {
  const run = (id: string, state: string, finishedAt: number | null, mirrored: number) =>
    sql.exec(
      `INSERT INTO runs(run_id, session_id, state, route, started_at, finished_at, mirrored) VALUES (?, 's-old', ?, ?, 1000, ?, ?)`,
      id,
      state,
      ROUTE,
      finishedAt,
      mirrored,
    );
  run("r-copied", "finished", 1500, 1);
  run("r-b", "failed", 2000, 0);
  run("r-a", "finished", 2000, 0);
  run("r-wait", "waiting", null, 0);
  for (const [id, mirrored] of [
    ["c-copied", 1],
    ["c-b", 0],
    ["c-a", 0],
  ] as const)
    sql.exec(
      `INSERT INTO model_calls(id, run_id, session_id, kind, provider, model, outcome, at, mirrored) VALUES (?, 'r-a', 's-old', 'turn', 'fake', 'm', 'ok', ?, ?)`,
      id,
      id === "c-copied" ? 1000 : 2000,
      mirrored,
    );
  sql.exec(`INSERT INTO meta(key, value) VALUES ('transcriptMirroredSeq', '1')`);
}
