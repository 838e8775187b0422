import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { mirrorToPostgres } from "../../durable-objects/session/mirror/postgres.ts";
import type { ModelCallRow } from "../../durable-objects/session/mirror/model-calls.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { RunRow } from "../../durable-objects/session/storage-rows.ts";
import { pruneStores } from "../../durable-objects/session/upkeep/retention.ts";
import { withDb } from "../../functions/db/client.ts";
import { modelCalls, usage } from "../../functions/db/schema.ts";
import { testEnv } from "../agent/model-helpers.ts";
import { migrateSessionSchema, SESSION_MIGRATIONS } from "../../durable-objects/session/schema.ts";
import { sessionStub } from "./helpers.ts";
import { insertStep17MirrorRows, recreateVersion1Object } from "./schema-v1.ts";

/**
 * The mirror's watermarks (mirror/watermark.ts, schema steps 18 and 20): runs and model calls are
 * copied to Postgres by a stamp that only grows, where each copied row was flagged, and the
 * watermark is stored in rows written anyway (a run's end, the sweep) instead of by each pass. A
 * row written while a pass awaits Postgres, or after an isolate whose clock ran ahead, must still
 * be copied; a new isolate may copy a row again but never skips one; the sweep must never drop a
 * row the mirror has not copied.
 */

const HOUR = 3_600_000;
const route = { channel: "testchan", accountId: "default", to: "peer" };
const policy = {
  activeSessionId: "live",
  archived: true,
  deadLetterMs: 30 * 24 * HOUR,
  maxEntries: 1,
  archiveMs: 30 * 24 * HOUR,
};

afterEach(() => vi.restoreAllMocks());

function startRun(store: SessionStore, runId: string, sessionId: string, startedAt: number): void {
  store.runs.insert({
    runId,
    sessionId,
    state: "running",
    route,
    modelRef: "fake/m",
    progressState: {},
    options: {},
    startedAt,
  });
}

function call(id: string, sessionId: string, at: number): ModelCallRow {
  return {
    id,
    runId: null,
    sessionId,
    kind: "turn",
    provider: "fake",
    model: "m",
    channel: "testchan",
    senderId: "u1",
    usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: 0.01,
    outcome: "ok",
    durationMs: 5,
    at,
  };
}

/** The rows a store writes (billed), summed over every statement it runs. */
function meteredStore(sql: SqlStorage): { store: SessionStore; written: () => number } {
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const metered = new Proxy(sql, {
    get: (target, property) =>
      property === "exec"
        ? (query: string, ...bindings: SqlStorageValue[]) => {
            const cursor = target.exec(query, ...bindings);
            cursors.push(cursor);
            return cursor;
          }
        : Reflect.get(target, property, target),
  });
  return {
    store: new SessionStore(metered),
    written: () => cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0),
  };
}

/** One mirror pass of `store` against the suite's Postgres; `duringAwait` runs while it awaits. */
async function mirrorPass(
  store: SessionStore,
  sessionKey: string,
  duringAwait?: () => void,
  options: { batchSize?: number; runsCopied?: string[] } = {},
): Promise<void> {
  let once = duringAwait;
  await mirrorToPostgres({
    env: testEnv,
    store,
    batchSize: options.batchSize ?? 50,
    // Called inside the Postgres work, after the rows were read and before the watermark moves.
    costOf: () => {
      once?.();
      once = undefined;
      return 0;
    },
    platformCostOf: (run: RunRow) => {
      options.runsCopied?.push(run.runId);
      return {
        workerRequests: 1,
        doRequests: 1,
        doGbSeconds: 0,
        postgresQueries: 1,
        estimatedUsd: 0,
      };
    },
    facts: {
      sessionKey,
      sessionId: "live",
      agentId: "main",
      channel: "testchan",
      chatType: "direct",
      lastRoute: null,
      modelOverride: null,
      sessionStartedAt: 1,
      lastInteractionAt: null,
    },
  });
}

/** What Postgres holds for the session: run ids (usage) and model call ids. */
async function inPostgres(sessionKey: string): Promise<{ runs: string[]; calls: string[] }> {
  return withDb(testEnv, async (db) => ({
    runs: (await db.select().from(usage).where(eq(usage.sessionKey, sessionKey)))
      .map((row) => row.runId)
      .sort(),
    calls: (await db.select().from(modelCalls).where(eq(modelCalls.sessionKey, sessionKey)))
      .map((row) => row.id)
      .sort(),
  }));
}

function withObject<T>(
  name: string,
  work: (sql: SqlStorage, key: string, state: DurableObjectState) => Promise<T>,
) {
  const key = `agent:main:mirror-watermark:${name}:${crypto.randomUUID()}`;
  return runInDurableObject(sessionStub(key), (_instance, state) =>
    work(state.storage.sql, key, state),
  );
}

describe("the mirror's watermarks (schema step 18)", () => {
  it("copies a run and a model call written while a pass awaits Postgres in the next pass, no row written by a pass", async () => {
    await withObject("await", async (sql, key) => {
      // One millisecond for everything: only the stamps' +1 keeps the rows apart.
      vi.spyOn(Date, "now").mockReturnValue(1_900_000_000_000);
      const { store, written } = meteredStore(sql);
      startRun(store, "run-1", "live", 1000);
      store.runs.finish("run-1", "finished", 2000, 0);
      store.modelCalls.record(call("call-1", "live", 1500));
      const before = written();
      await mirrorPass(store, key, () => {
        startRun(store, "run-2", "live", 3000);
        store.runs.finish("run-2", "finished", 4000, 0);
        store.modelCalls.record(call("call-2", "live", 3500));
      });
      // The pass itself wrote nothing (the hook wrote the run and call rows: 3).
      expect(written() - before).toBe(3);
      expect(await inPostgres(key)).toEqual({ runs: ["run-1"], calls: ["call-1"] });
      expect(store.runs.hasUnmirrored()).toBe(true);
      expect(store.modelCalls.hasUnmirrored()).toBe(true);

      await mirrorPass(store, key);
      expect(await inPostgres(key)).toEqual({
        runs: ["run-1", "run-2"],
        calls: ["call-1", "call-2"],
      });
      expect(store.runs.hasUnmirrored()).toBe(false);
      expect(store.modelCalls.hasUnmirrored()).toBe(false);
      // A pass with nothing new writes nothing.
      const idle = written();
      await mirrorPass(store, key);
      expect(written()).toBe(idle);
    });
  });

  it("a previous isolate's stamp ahead of the clock hides no newer row", async () => {
    await withObject("future", async (sql, key) => {
      const ahead = Date.now() + 24 * HOUR;
      // The previous isolate's rows, stamped by a clock a day ahead; the call is still unmirrored.
      const previous = new SessionStore(sql);
      startRun(previous, "run-old", "live", 1000);
      previous.runs.finish("run-old", "finished", 2000, 0);
      sql.exec(`UPDATE runs SET mirror_stamp = ? WHERE run_id = 'run-old'`, ahead);
      previous.modelCalls.record(call("call-old", "live", 1500));
      sql.exec(`UPDATE model_calls SET mirror_stamp = ? WHERE id = 'call-old'`, ahead + 1);
      await mirrorPass(previous, key);
      expect(previous.mirrorMarks.current()).toMatchObject({
        runStamp: ahead,
        callStamp: ahead + 1,
      });
      // The previous isolate's rows are gone (swept: the sweep stored the watermark first), only
      // the watermark still tells their stamps.
      previous.mirrorMarks.persist();
      sql.exec(`DELETE FROM runs`);
      sql.exec(`DELETE FROM model_calls`);

      // A new isolate: its clock is behind the watermark, its stamps are not.
      const store = new SessionStore(sql);
      startRun(store, "run-new", "live", 3000);
      store.runs.finish("run-new", "finished", 4000, 0);
      store.modelCalls.record(call("call-new", "live", 3500));
      expect(store.runs.hasUnmirrored()).toBe(true);
      expect(store.modelCalls.hasUnmirrored()).toBe(true);
      await mirrorPass(store, key);
      expect(await inPostgres(key)).toEqual({
        runs: ["run-new", "run-old"],
        calls: ["call-new", "call-old"],
      });
      expect(store.runs.hasUnmirrored()).toBe(false);
      expect(store.modelCalls.hasUnmirrored()).toBe(false);
    });
  });

  it("the sweep drops no run or model call the mirror has not copied", async () => {
    await withObject("retention", async (sql, key) => {
      const store = new SessionStore(sql);
      const T0 = Date.now() - 72 * HOUR;
      startRun(store, "earlier-copied", "earlier", T0);
      store.runs.finish("earlier-copied", "finished", T0, 0);
      store.modelCalls.record(call("call-copied", "live", T0));
      await mirrorPass(store, key, () => {
        // Finished and recorded as long ago, but while the pass awaited: not in this batch.
        startRun(store, "earlier-late", "earlier", T0);
        store.runs.finish("earlier-late", "finished", T0, 0);
        store.modelCalls.record(call("call-late", "live", T0));
        // The current session's older runs beyond maxEntries are folded only once copied too.
        startRun(store, "live-1", "live", T0);
        store.runs.finish("live-1", "finished", T0, 0);
        startRun(store, "live-2", "live", T0 + 1);
        store.runs.finish("live-2", "finished", T0 + 1, 0);
      });
      pruneStores(store, policy, Date.now());
      const runs = () =>
        sql
          .exec<{ run_id: string }>(`SELECT run_id FROM runs ORDER BY run_id`)
          .toArray()
          .map((row) => row.run_id);
      const calls = () =>
        sql
          .exec<{ id: string }>(`SELECT id FROM model_calls ORDER BY id`)
          .toArray()
          .map((row) => row.id);
      expect(runs()).toEqual(["earlier-late", "live-1", "live-2"]);
      expect(calls()).toEqual(["call-late"]);

      await mirrorPass(store, key);
      pruneStores(store, policy, Date.now());
      expect(runs()).toEqual(["live-2"]);
      expect(calls()).toEqual([]);
      expect(store.runs.sessionTotals("live").runs).toBe(2);
    });
  });

  it("a new isolate copies again only what was copied since the last run's end, each row once in Postgres", async () => {
    await withObject("isolates", async (sql, key) => {
      // Ids of their own: Postgres keys usage and model calls by id across the suite's sessions.
      const first = new SessionStore(sql);
      startRun(first, "iso-run-1", "live", 1000);
      first.runs.finish("iso-run-1", "finished", 2000, 0);
      first.modelCalls.record(call("iso-call-1", "live", 1500));
      await mirrorPass(first, key);
      expect(first.runs.hasUnmirrored()).toBe(false);

      // The isolate is evicted before any run ends: nothing stored says iso-run-1 was copied.
      const second = new SessionStore(sql);
      expect(second.runs.hasUnmirrored()).toBe(true);
      const copiedBySecond: string[] = [];
      await mirrorPass(second, key, undefined, { runsCopied: copiedBySecond });
      expect(copiedBySecond).toEqual(["iso-run-1"]);
      expect(await inPostgres(key)).toEqual({ runs: ["iso-run-1"], calls: ["iso-call-1"] });

      // iso-run-2's end carries the watermark that covers iso-run-1: a third isolate copies
      // iso-run-2 alone.
      startRun(second, "iso-run-2", "live", 3000);
      second.runs.finish("iso-run-2", "finished", 4000, 0);
      await mirrorPass(second, key);
      const third = new SessionStore(sql);
      const copiedByThird: string[] = [];
      await mirrorPass(third, key, undefined, { runsCopied: copiedByThird });
      expect(copiedByThird).toEqual(["iso-run-2"]);
      expect(await inPostgres(key)).toEqual({
        runs: ["iso-run-1", "iso-run-2"],
        calls: ["iso-call-1"],
      });
      expect(third.runs.hasUnmirrored()).toBe(false);
      expect(third.modelCalls.hasUnmirrored()).toBe(false);
    });
  });

  it("the sweep stores the watermark before it drops rows, so a later isolate copies none again", async () => {
    await withObject("sweep-stores", async (sql, key) => {
      const T0 = Date.now() - 72 * HOUR;
      const store = new SessionStore(sql);
      startRun(store, "earlier", "earlier", T0);
      store.runs.finish("earlier", "finished", T0, 0);
      store.modelCalls.record(call("call-earlier", "earlier", T0));
      await mirrorPass(store, key);
      pruneStores(store, policy, Date.now());
      // The run that would have carried a mark is gone; meta holds the watermark instead.
      expect(sql.exec(`SELECT COUNT(*) AS n FROM runs`).one().n).toBe(0);
      const later = new SessionStore(sql);
      expect(later.mirrorMarks.current()).toEqual(store.mirrorMarks.current());
      expect(later.runs.hasUnmirrored()).toBe(false);
      expect(later.modelCalls.hasUnmirrored()).toBe(false);
    });
  });

  it("an object migrated with mirrored flags copies exactly its unflagged rows, each once", async () => {
    await withObject("migrated", async (sql, key, state) => {
      recreateVersion1Object(sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 17));
      insertStep17MirrorRows(sql);
      migrateSessionSchema(state.storage);
      const store = new SessionStore(state.storage);
      const runsCopied: string[] = [];
      await mirrorPass(store, key, undefined, { batchSize: 1, runsCopied });
      expect(await inPostgres(key)).toEqual({ runs: ["r-a"], calls: ["c-a"] });
      for (let pass = 0; pass < 3; pass++)
        await mirrorPass(store, key, undefined, { batchSize: 1, runsCopied });
      // The flagged r-copied and c-copied were copied before the step: never again.
      expect(await inPostgres(key)).toEqual({ runs: ["r-a", "r-b"], calls: ["c-a", "c-b"] });
      expect(runsCopied).toEqual(["r-a", "r-b"]);
      expect(store.runs.hasUnmirrored()).toBe(false);
      expect(store.modelCalls.hasUnmirrored()).toBe(false);
    });
  });
});
