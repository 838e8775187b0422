import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  migrateSessionSchema,
  SESSION_MIGRATIONS,
  SESSION_SCHEMA_VERSION,
  storedSchemaVersion,
} from "../../durable-objects/session/schema.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { sessionStub } from "./helpers.ts";
import { counts, insertStep17MirrorRows, recreateVersion1Object } from "./schema-v1.ts";

describe("SessionDO schema migrations", () => {
  it("numbers its steps 1, 2, 3, … without gaps", () => {
    expect(SESSION_MIGRATIONS.map((step) => step.version)).toEqual(
      SESSION_MIGRATIONS.map((_step, index) => index + 1),
    );
    expect(SESSION_SCHEMA_VERSION).toBe(SESSION_MIGRATIONS.length);
  });

  it("migrates an object created with the version-1 tables without losing a row", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v1"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      const before = counts(sql);
      expect(storedSchemaVersion(sql)).toBe(1);

      expect(migrateSessionSchema(state.storage)).toBe(SESSION_SCHEMA_VERSION);
      expect(storedSchemaVersion(sql)).toBe(SESSION_SCHEMA_VERSION);
      expect(counts(sql)).toEqual(before);

      // Old rows read through the store, with the new columns at their defaults.
      const store = new SessionStore(state.storage);
      const run = store.runs.get("run-1")!;
      expect(run).toMatchObject({
        state: "running",
        steps: 3,
        inputTokens: 120,
        startedAt: 1000,
        resumes: 0,
      });
      expect(store.inbox.byKey("testchan:1")).toMatchObject({
        seq: 1,
        state: "taken",
        runId: "run-1",
        failures: 0,
        deadReason: null,
      });
      expect(store.transcript.recent("s-old").map((row) => row.message)).toEqual([
        { role: "user", content: "hello" },
      ]);
      expect(store.outbox.rows().map((row) => row.text)).toEqual(["a notice"]);
      expect(store.meta.get("summary:s-old")).toBe("earlier summary");
      // The dedup tombstone and alias still hold.
      expect(
        store.inbox.insert(
          {
            envelope: { dedupKey: "alias:1" },
            agentId: "main",
            sessionKey: "agent:main:old",
          } as never,
          2000,
        ),
      ).toBeNull();

      // Applied once: running it again changes nothing and does not fail on the ALTERs.
      expect(migrateSessionSchema(state.storage)).toBe(SESSION_SCHEMA_VERSION);
      expect(counts(sql)).toEqual(before);
    });
  });

  it("moves an object's pending metrics rows into one map (step 9), counts and all", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v8"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 8));
      sql.exec(
        `INSERT INTO metrics_pending(series, value) VALUES ('a{x="1"}', 3), ('b', 0.5), ('zeroed', 0)`,
      );
      expect(migrateSessionSchema(state.storage)).toBe(SESSION_SCHEMA_VERSION);
      const tables = sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE name = 'metrics_pending'`)
        .toArray();
      expect(tables).toEqual([]);
      const store = new SessionStore(state.storage);
      store.metrics.add([["b", 1]]);
      expect(Object.fromEntries(store.metrics.takeAll())).toEqual({ 'a{x="1"}': 3, b: 1.5 });
      expect(store.metrics.hasAny()).toBe(false);
    });
  });

  it("keeps what the mirror copied, the aliases and the metrics numbering across step 10's index changes", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v9"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 9));
      // Rows 1–3 mirrored, 4 not yet (a batch that failed), 5 mirrored by a later batch.
      for (const n of [2, 3, 4, 5])
        sql.exec(
          `INSERT INTO transcript(session_id, run_id, role, message, created_at, mirrored) VALUES ('s-old', 'run-1', 'user', ?, ?, ?)`,
          JSON.stringify({ role: "user", content: `m${n}` }),
          1000 + n,
          n === 4 ? 0 : 1,
        );
      sql.exec(`UPDATE transcript SET mirrored = 1 WHERE seq = 1`);
      sql.exec(`INSERT INTO inbox_alias(alias, seq, at) VALUES ('alias:2', 1, 2000)`);
      sql.exec(
        `INSERT INTO meta(key, value) VALUES ('metricsBatchNo', '41'), ('metricsFlushedAt', '123456')`,
      );
      sql.exec(`UPDATE inbox SET state = 'settled', settled_at = 3000 WHERE seq = 1`);
      const before = counts(sql);

      expect(migrateSessionSchema(state.storage)).toBe(SESSION_SCHEMA_VERSION);
      expect(counts(sql)).toEqual(before);
      const store = new SessionStore(state.storage);
      // Everything from the first unmirrored row on is copied (again): the mirror is idempotent.
      expect(store.transcript.unmirrored(10).map((row) => row.message.content)).toEqual([
        "m4",
        "m5",
      ]);
      store.transcript.markMirrored(5);
      expect(store.transcript.hasUnmirrored()).toBe(false);
      const seq = store.transcript.append("s-old", null, { role: "user", content: "m6" }, 4000);
      expect(store.transcript.unmirrored(10).map((row) => row.seq)).toEqual([seq]);
      // Aliases keep their events: a copy under either alias is a duplicate.
      for (const alias of ["alias:1", "alias:2"])
        expect(store.inbox.byKeyOrAlias(alias)?.seq).toBe(1);
      expect(
        sql.exec<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE name = 'inbox_alias'`).one()
          .sql,
      ).toMatch(/WITHOUT ROWID/);
      expect(store.meta.getJson("metricsFlushed")).toEqual({ no: 41, at: 123456 });
      expect(store.meta.get("metricsBatchNo" as never)).toBeUndefined();
      // Open events are read by their seqs (open-rows.ts; no open-events index from step 19).
      expect(store.inbox.count("taken")).toBe(0);
      const plan = sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT * FROM inbox WHERE seq = 1`)
        .toArray()
        .map((row) => row.detail)
        .join(" ");
      expect(plan).toContain("INTEGER PRIMARY KEY (rowid=?)");
    });
  });

  it("keeps what the mirror copied across step 18's watermarks: the flagged rows are covered, the others copied once", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v17"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 17));
      insertStep17MirrorRows(sql);
      const before = counts(sql);

      expect(migrateSessionSchema(state.storage)).toBe(SESSION_SCHEMA_VERSION);
      expect(counts(sql)).toEqual(before);
      const store = new SessionStore(state.storage);
      // The transcript's watermark moved into the one row; nothing of runs or calls is covered
      // but what was flagged.
      expect(store.meta.getJson("mirrorWatermark")).toEqual({
        transcriptSeq: 1,
        runStamp: 0,
        callStamp: 0,
      });
      expect(store.meta.get("transcriptMirroredSeq" as never)).toBeUndefined();
      expect(store.transcript.hasUnmirrored()).toBe(false);
      // One at a time (a batch of 1): each unflagged finished row once, in finishing order.
      const copied: string[] = [];
      for (let pass = 0; pass < 4; pass++) {
        const [run] = store.runs.unmirrored(1);
        const [call] = store.modelCalls.unmirrored(1);
        if (run) copied.push(run.runId);
        if (call) copied.push(call.id);
        store.mirrorMarks.advance({ runStamp: run?.mirrorStamp, callStamp: call?.mirrorStamp });
      }
      expect(copied).toEqual(["r-a", "c-a", "r-b", "c-b"]);
      expect(store.runs.hasUnmirrored()).toBe(false);
      expect(store.modelCalls.hasUnmirrored()).toBe(false);
      // A run that was still running is copied once it finishes, above every old stamp.
      store.runs.finish("run-1", "finished", 3000, 0);
      expect(store.runs.unmirrored(10).map((run) => run.runId)).toEqual(["run-1"]);
    });
  });

  it("creates a new object's tables in one go exactly as replaying every step does", async () => {
    const shape = (sql: SqlStorage) => {
      const tables = sql
        .exec<{ name: string; wr: number }>(
          `SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name`,
        )
        .toArray();
      return tables.map(({ name, wr }) => ({
        name,
        withoutRowid: wr,
        columns: sql
          .exec(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, name)
          .toArray(),
        indexes: sql
          .exec<{ name: string; unique: number; origin: string; partial: number }>(
            `SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name`,
            name,
          )
          .toArray()
          .map((index) => ({
            ...index,
            name: index.origin === "c" ? index.name : index.origin,
            columns: sql
              .exec(`SELECT name FROM pragma_index_info(?)`, index.name)
              .toArray()
              .map((column) => column.name),
            where: / WHERE (.*)$/s.exec(
              sql
                .exec<{ sql: string | null }>(
                  `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`,
                  index.name,
                )
                .toArray()[0]?.sql ?? "",
            )?.[1],
          })),
      }));
    };
    const empty = async (key: string) =>
      runInDurableObject(sessionStub(key), async (_instance, state) => {
        const sql = state.storage.sql;
        for (const { name } of sql
          .exec<{ name: string }>(
            `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'`,
          )
          .toArray())
          sql.exec(`DROP TABLE ${name}`);
        return state;
      });
    let replayed: unknown;
    await runInDurableObject(
      sessionStub("agent:main:schema-replayed"),
      async (_instance, state) => {
        await empty("agent:main:schema-replayed");
        // Every step but through a copy of the list: the fresh path is only for the list itself.
        expect(migrateSessionSchema(state.storage, [...SESSION_MIGRATIONS])).toBe(
          SESSION_SCHEMA_VERSION,
        );
        replayed = shape(state.storage.sql);
      },
    );
    await runInDurableObject(sessionStub("agent:main:schema-fresh"), async (_instance, state) => {
      await empty("agent:main:schema-fresh");
      const written = migrateSessionSchema(state.storage);
      expect(written).toBe(SESSION_SCHEMA_VERSION);
      expect(shape(state.storage.sql)).toEqual(replayed);
    });
  });

  it("applies all steps of a migration or none of them", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-atomic"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      const broken = [
        ...SESSION_MIGRATIONS,
        {
          version: SESSION_SCHEMA_VERSION + 1,
          why: "a step that fails half-way",
          statements: [
            `ALTER TABLE runs ADD COLUMN extra INTEGER`,
            `ALTER TABLE no_such_table ADD COLUMN x INTEGER`,
          ],
        },
      ];
      expect(() => migrateSessionSchema(state.storage, broken)).toThrow();
      // Nothing of the failed run stuck: still version 1, no new column from step 2 or the broken step.
      expect(storedSchemaVersion(sql)).toBe(1);
      const columns = sql
        .exec<{ name: string }>(`SELECT name FROM pragma_table_info('runs')`)
        .toArray()
        .map((row) => row.name);
      expect(columns).not.toContain("resumes");
      expect(columns).not.toContain("extra");
      expect(migrateSessionSchema(state.storage)).toBe(SESSION_SCHEMA_VERSION);
    });
  });

  it("refuses to run against an object written by newer code", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-newer"), async (_instance, state) => {
      state.storage.sql.exec(
        `UPDATE meta SET value = ? WHERE key = 'schemaVersion'`,
        String(SESSION_SCHEMA_VERSION + 5),
      );
      expect(() => migrateSessionSchema(state.storage)).toThrow(/newer than this code knows/);
      state.storage.sql.exec(
        `UPDATE meta SET value = ? WHERE key = 'schemaVersion'`,
        String(SESSION_SCHEMA_VERSION),
      );
    });
  });
});
