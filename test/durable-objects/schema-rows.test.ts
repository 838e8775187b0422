import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrateSessionSchema, SESSION_MIGRATIONS } from "../../durable-objects/session/schema.ts";
import { InboxStore } from "../../durable-objects/session/inbox/store.ts";
import { MetaStore } from "../../durable-objects/session/meta.ts";
import { OutboxStore } from "../../durable-objects/session/outbox/store.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { sessionStub } from "./helpers.ts";
import { counts, recreateVersion1Object, ROUTE } from "./schema-v1.ts";

/**
 * The schema steps that cut the rows a message writes (issue 19 item 9): objects already in
 * production keep every row, and each step writes what it promises and no more.
 */
describe("SessionDO schema steps for fewer rows written", () => {
  it("names open events and chunks by settled_at from step 12 on, old rows included", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v11"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 11));
      // Shapes older code could leave: settled without a time, open with one.
      sql.exec(
        `INSERT INTO inbox(dedup_key, event, state, received_at) VALUES ('testchan:2', '{}', 'settled', 2000)`,
      );
      sql.exec(`UPDATE inbox SET settled_at = 1500 WHERE seq = 1`);
      sql.exec(
        `INSERT INTO outbox(id, run_id, route, text, state, next_at, created_at) VALUES ('notice:2:0', NULL, ?, 'sent', 'sent', 2000, 2000)`,
        ROUTE,
      );
      migrateSessionSchema(state.storage);
      const store = new SessionStore(state.storage);
      expect(store.inbox.unsettledSeqs()).toEqual([1]);
      expect(store.inbox.count("taken")).toBe(1);
      expect(
        sql.exec(`SELECT settled_at FROM inbox WHERE dedup_key = 'testchan:2'`).one().settled_at,
      ).toBe(2000);
      expect(store.outbox.unsettled().map((row) => row.id)).toEqual(["notice:1:0"]);
      const plan = (query: string) =>
        sql
          .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`)
          .toArray()
          .map((row) => row.detail)
          .join(" ");
      // Open chunks are read by their ids (open-rows.ts; no open-chunks index from step 19).
      expect(plan(`SELECT * FROM outbox WHERE id = 'notice:1:0'`)).toContain(
        "USING PRIMARY KEY (id=?)",
      );
      // A step that leaves an event or a chunk open writes its row and no index entry.
      const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
      const metered = new Proxy(sql, {
        get: (target, property) =>
          property === "exec"
            ? (query: string, ...bindings: unknown[]) => {
                const cursor = target.exec(query, ...bindings);
                cursors.push(cursor);
                return cursor;
              }
            : Reflect.get(target, property, target),
      });
      const written = () => cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0);
      new InboxStore(metered, new MetaStore(metered)).take(1, "run-2");
      expect(written()).toBe(1);
      new OutboxStore(metered).update("notice:1:0", { state: "sending", attempts: 1 }, 3000);
      expect(written()).toBe(2);
    });
  });

  it("never gives a seq twice after step 14 drops AUTOINCREMENT, even when the newest rows were deleted", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v12"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 13));
      // Seqs 2 and 3 were given and deleted: AUTOINCREMENT's sequence remembers them.
      for (const n of [2, 3]) {
        sql.exec(
          `INSERT INTO inbox(dedup_key, event, state, received_at, settled_at) VALUES (?, '{}', 'settled', 2000, 2000)`,
          `testchan:${n}`,
        );
        sql.exec(
          `INSERT INTO transcript(session_id, run_id, role, message, created_at) VALUES ('s-old', NULL, 'user', '{}', 2000)`,
        );
      }
      sql.exec(`DELETE FROM inbox WHERE seq > 1`);
      sql.exec(`DELETE FROM transcript WHERE seq > 1`);
      const before = counts(sql);
      migrateSessionSchema(state.storage);
      // Every row kept; meta gains the two floors (seq 3 was given, then deleted).
      expect(counts(sql)).toEqual({ ...before, meta: before.meta! + 2 });
      expect(
        sql
          .exec<{ key: string; value: string }>(
            `SELECT key, value FROM meta WHERE key LIKE '%SeqFloor' ORDER BY key`,
          )
          .toArray(),
      ).toEqual([
        { key: "inboxSeqFloor", value: "3" },
        { key: "transcriptSeqFloor", value: "3" },
      ]);
      expect(
        sql
          .exec<{ sql: string }>(
            `SELECT sql FROM sqlite_master WHERE name IN ('inbox', 'transcript') AND sql LIKE '%AUTOINCREMENT%'`,
          )
          .toArray(),
      ).toEqual([]);
      const store = new SessionStore(state.storage);
      const event = (key: string) => ({
        envelope: { dedupKey: key, text: "x" },
        agentId: "main",
        sessionKey: "agent:main:old",
      });
      expect(store.inbox.insert(event("testchan:4") as never, 3000)).toBe(4);
      expect(store.transcript.append("s-old", null, { role: "user", content: "x" }, 3000)).toBe(4);
      // The sweep deletes every tombstone, the newest included: the next event still gets 5.
      store.inbox.settle(1, null, 3000);
      store.inbox.settle(4, null, 3000);
      store.inbox.prune(10 * 24 * 60 * 60 * 1000);
      expect(counts(sql).inbox).toBe(0);
      expect(store.inbox.insert(event("testchan:5") as never, 4000)).toBe(5);
      // Likewise the transcript once an earlier session's rows are all archived and mirrored.
      store.transcript.markMirrored(4);
      store.transcript.prune({ activeSessionId: "s-new", archived: true, archiveMs: false }, 5000);
      expect(counts(sql).transcript).toBe(0);
      expect(store.transcript.append("s-new", null, { role: "user", content: "y" }, 5000)).toBe(5);
      // No sequence row per insert now: the transcript's is its row alone (its session index
      // entry went too, with step 17).
      const cursor = sql.exec(
        `INSERT INTO transcript(seq, session_id, role, message, created_at) VALUES (6, 's-new', 'user', '{}', 6000)`,
      );
      expect(cursor.rowsWritten).toBe(1);
    });
  });

  it("keys runs and reply chunks by id alone from step 15, delivery order and replays kept", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v14"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 14));
      // Queued in one millisecond, in an order their ids do not sort in: only the rowid kept it.
      for (const id of ["z:0", "a:0"])
        sql.exec(
          `INSERT INTO outbox(id, run_id, route, text, state, next_at, created_at) VALUES (?, NULL, ?, ?, 'pending', 1000, 1000)`,
          id,
          ROUTE,
          id,
        );
      const before = counts(sql);
      migrateSessionSchema(state.storage);
      expect(counts(sql)).toEqual(before);
      expect(
        sql
          .exec<{ name: string }>(
            `SELECT name FROM pragma_table_list WHERE name IN ('runs', 'outbox') AND wr = 1 ORDER BY name`,
          )
          .toArray()
          .map((row) => row.name),
      ).toEqual(["outbox", "runs"]);
      const store = new SessionStore(state.storage);
      expect(store.runs.get("run-1")).toMatchObject({ steps: 3, inputTokens: 120 });
      const order = () => store.outbox.unsettled().map((row) => row.id);
      expect(order()).toEqual(["notice:1:0", "z:0", "a:0"]);
      // A new chunk in the same millisecond goes behind them, and once only: a resumed run that
      // queues its reply again (the same id) adds nothing and does not move it.
      const chunk = { runId: null, route: JSON.parse(ROUTE), chunkIndex: 0, chunkCount: 1 };
      for (const text of ["first", "again"])
        store.outbox.insert({ ...chunk, id: "b:0", text }, 1000);
      expect(order()).toEqual(["notice:1:0", "z:0", "a:0", "b:0"]);
      expect(store.outbox.rows().find((row) => row.id === "b:0")?.text).toBe("first");
      // A chunk is its row (its open-chunks entry went with step 19), a run its row: the rowid
      // tables wrote the key's index entry besides (3 and 2).
      const insertChunk = sql.exec(
        `INSERT INTO outbox(id, route, text, state, next_at, created_at) VALUES ('c:0', ?, 'c', 'pending', 1000, 1000)`,
        ROUTE,
      );
      expect(insertChunk.rowsWritten).toBe(1);
      const insertRun = sql.exec(
        `INSERT INTO runs(run_id, session_id, state, route, started_at) VALUES ('run-2', 's-old', 'running', ?, 2000)`,
        ROUTE,
      );
      expect(insertRun.rowsWritten).toBe(1);
    });
  });

  it("reads the current session's transcript above its floor from step 17, without a session index", async () => {
    await runInDurableObject(sessionStub("agent:main:schema-v16"), async (_instance, state) => {
      const sql = state.storage.sql;
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 16));
      // s-old (the current session) holds seq 1 and 2, an earlier session's row is seq 3.
      const row = (sessionId: string, content: string) =>
        sql.exec(
          `INSERT INTO transcript(session_id, role, message, created_at) VALUES (?, 'user', ?, 2000)`,
          sessionId,
          JSON.stringify({ role: "user", content }),
        );
      row("s-old", "second");
      row("s-before", "stray");
      const before = counts(sql);
      migrateSessionSchema(state.storage);
      expect(counts(sql)).toEqual(before);
      const store = new SessionStore(state.storage);
      // No floor until the next session starts: the current one is read whole.
      expect(store.meta.get("transcriptSessionFloor")).toBeUndefined();
      const texts = (rows: { message: { content: unknown } }[]) =>
        rows.map((entry) => entry.message.content);
      expect(texts(store.transcript.recent("s-old"))).toEqual(["hello", "second"]);
      expect(texts(store.transcript.ofSession("s-before"))).toEqual(["stray"]);
      const plan = sql
        .exec<{ detail: string }>(
          `EXPLAIN QUERY PLAN SELECT * FROM transcript WHERE seq > 5 AND session_id = 's-old' ORDER BY seq DESC LIMIT 10`,
        )
        .toArray()
        .map((entry) => entry.detail)
        .join(" ");
      expect(plan).toMatch(/INTEGER PRIMARY KEY/);
      expect(plan).not.toContain("transcript_session");
      // A new session starts above every seq given: the old one's rows stay out of its context,
      // and a row appended to the old session later is still read as the old session's.
      store.meta.set("sessionId", "s-new");
      store.transcript.startSession();
      expect(store.meta.get("transcriptSessionFloor")).toBe("3");
      store.transcript.append("s-new", null, { role: "user", content: "fresh" }, 3000);
      store.transcript.append("s-old", null, { role: "assistant", content: "late" }, 3000);
      expect(texts(store.transcript.recent("s-new"))).toEqual(["fresh"]);
      expect(texts(store.transcript.ofSession("s-old"))).toEqual(["hello", "second", "late"]);
      // Compaction of the current session marks only its own rows.
      expect(store.transcript.markCompacted("s-new", 100)).toBe(1);
      expect(texts(store.transcript.recent("s-old"))).toEqual(["hello", "second", "late"]);
    });
  });
});
