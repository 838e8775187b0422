import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import {
  pruneStores,
  type RetentionPolicy,
} from "../../durable-objects/session/upkeep/retention.ts";
import { PAYLOAD_MS, TOMBSTONE_MS } from "../../durable-objects/session/inbox/store.ts";
import { migrateSessionSchema, SESSION_MIGRATIONS } from "../../durable-objects/session/schema.ts";
import { newScenario, scriptModel, slackMessages, uniqueId } from "../channels/slack/helpers.ts";
import { plainSlackDm } from "./slack-dm.ts";
import { sessionStub, waitFor, webchatEvent } from "./helpers.ts";
import { recreateVersion1Object } from "./schema-v1.ts";

/**
 * A run that ends normally settles its taken events in its own row (inbox/settled-by-run.ts,
 * schema step 21), with no write to the events: every read must still see them settled with the
 * run's reply, a duplicate delivery must still be a duplicate, a crash before the end's commit must
 * leave them open, and the sweep must write them settled before it drops the run they depend on.
 */

const HOUR = 3_600_000;
const route = { channel: "testchan", accountId: "default", to: "peer" };
const noPostgres = (maxEntries = 500): RetentionPolicy => ({
  activeSessionId: "live",
  archived: false,
  deadLetterMs: 30 * 24 * HOUR,
  maxEntries,
  archiveMs: 30 * 24 * HOUR,
});

function withStore<T>(
  name: string,
  work: (store: SessionStore, sql: SqlStorage, storage: DurableObjectStorage) => T,
) {
  const key = `agent:main:settled-by-run:${name}:${crypto.randomUUID()}`;
  return runInDurableObject(sessionStub(key), (_instance, state) =>
    work(new SessionStore(state.storage.sql), state.storage.sql, state.storage),
  );
}

/** One event taken by one run, as triage and the run's start leave them. */
function takenByRun(store: SessionStore, text: string, runId: string, at: number): number {
  const seq = store.inbox.insert(webchatEvent("agent:main:settled", text, `${runId}-event`), at)!;
  store.runs.insert({
    runId,
    sessionId: "live",
    state: "running",
    route,
    modelRef: "fake/m",
    progressState: {},
    options: {},
    startedAt: at,
  });
  store.inbox.take(seq, runId);
  return seq;
}

function physical(sql: SqlStorage, seq: number) {
  return sql
    .exec<{ state: string; reply: string | null; settled_at: number | null; event: string }>(
      `SELECT state, reply, settled_at, event FROM inbox WHERE seq = ?`,
      seq,
    )
    .one();
}

describe("events settled by their run's end (schema step 21)", () => {
  it("reads the run's taken events as settled with its reply, and writes no inbox row", async () => {
    await withStore("reads", (store, sql) => {
      const seq = takenByRun(store, "hello", "run-a", 1_000);
      expect(store.inbox.countUnsettled()).toBe(1);
      const stored = physical(sql, seq);
      store.runs.finish("run-a", "finished", 2_000, 0, { reply: "the answer" });
      // The event's row is as the run's start left it.
      expect(physical(sql, seq)).toEqual(stored);
      expect(store.inbox.bySeq(seq)).toMatchObject({ state: "settled", reply: "the answer" });
      expect(store.inbox.byRun("run-a").map((row) => row.state)).toEqual(["settled"]);
      expect(store.inbox.countUnsettled()).toBe(0);
      expect(store.inbox.count("settled")).toBe(1);
      expect(store.inbox.byState("settled").map((row) => row.seq)).toEqual([seq]);
      // The tombstone's expiry counts from the run's end.
      expect(store.inbox.pruneDueAt()).toBe(2_000 + TOMBSTONE_MS);
      // A retry of the same event is a duplicate.
      expect(
        store.inbox.insert(webchatEvent("agent:main:settled", "hello", "run-a-event"), 3_000),
      ).toBeNull();
    });
  });

  it("a silent end settles with an empty reply, a failed one settles nothing by itself", async () => {
    await withStore("silent", (store) => {
      const silent = takenByRun(store, "quiet", "run-silent", 1_000);
      store.runs.finish("run-silent", "finished", 2_000, 0, { reply: "" });
      expect(store.inbox.bySeq(silent)).toMatchObject({ state: "settled", reply: "" });
      const none = takenByRun(store, "nothing", "run-null", 1_000);
      store.runs.finish("run-null", "finished", 2_000, 0, { reply: null });
      expect(store.inbox.bySeq(none)).toMatchObject({ state: "settled", reply: null });
      const failed = takenByRun(store, "boom", "run-failed", 1_000);
      store.runs.finish("run-failed", "failed", 2_000, 0);
      expect(store.inbox.bySeq(failed)?.state).toBe("taken");
    });
  });

  it("a crash before the end's transaction commits leaves the event open for the resumed run", async () => {
    await withStore("rollback", (store, _sql, storage) => {
      const seq = takenByRun(store, "hello", "run-crash", 1_000);
      expect(() =>
        storage.transactionSync(() => {
          store.runs.finish("run-crash", "finished", 2_000, 0, { reply: "lost" });
          throw new Error("the isolate died here");
        }),
      ).toThrow("the isolate died here");
      expect(store.inbox.bySeq(seq)?.state).toBe("taken");
      expect(store.runs.get("run-crash")?.state).toBe("running");
      expect(store.inbox.countUnsettled()).toBe(1);
    });
  });

  it("the sweep writes the event settled with its payload cleared an hour on, and drops it at 48 h", async () => {
    await withStore("sweep", (store, sql) => {
      const T0 = Date.now() - PAYLOAD_MS - 2 * HOUR;
      const seq = takenByRun(store, "hello", "run-old", T0);
      store.runs.finish("run-old", "finished", T0 + 1, 0, { reply: "answered" });
      const recent = takenByRun(store, "hi again", "run-new", Date.now());
      store.runs.finish("run-new", "finished", Date.now(), 0, { reply: "recent" });
      pruneStores(store, noPostgres(), Date.now());
      expect(physical(sql, seq)).toEqual({
        state: "settled",
        reply: "answered",
        settled_at: T0 + 1,
        event: "{}",
      });
      // Settled less than an hour ago: still read from its run, payload kept.
      expect(physical(sql, recent).state).toBe("taken");
      expect(store.inbox.bySeq(recent)).toMatchObject({ state: "settled", reply: "recent" });
      pruneStores(store, noPostgres(), T0 + 1 + TOMBSTONE_MS + 1);
      expect(store.inbox.bySeq(seq)).toBeUndefined();
    });
  });

  it("runs folded away within the hour first write their events settled, so they stay settled", async () => {
    await withStore("fold", (store, sql) => {
      const now = Date.now();
      const first = takenByRun(store, "one", "run-1", now - 3);
      store.runs.finish("run-1", "finished", now - 3, 0, { reply: "first" });
      const second = takenByRun(store, "two", "run-2", now - 2);
      store.runs.finish("run-2", "finished", now - 2, 0, { reply: "second" });
      const third = takenByRun(store, "three", "run-3", now - 1);
      store.runs.finish("run-3", "finished", now - 1, 0, { reply: "third" });
      // maxEntries 1: run-1 and run-2 are folded into the totals and their rows deleted.
      pruneStores(store, noPostgres(1), now);
      expect(store.runs.get("run-1")).toBeUndefined();
      expect(store.runs.get("run-2")).toBeUndefined();
      expect(physical(sql, first)).toMatchObject({ state: "settled", reply: "first" });
      expect(physical(sql, second)).toMatchObject({ state: "settled", reply: "second" });
      expect(store.inbox.bySeq(first)).toMatchObject({ state: "settled", reply: "first" });
      expect(physical(sql, third).state).toBe("taken");
      expect(store.inbox.countUnsettled()).toBe(0);
    });
  });

  it("an earlier session's run deleted at 48 h leaves its events settled", async () => {
    await withStore("expired", (store, sql) => {
      const T0 = Date.now() - 50 * HOUR;
      const seq = store.inbox.insert(webchatEvent("agent:main:settled", "old", "old-event"), T0)!;
      store.runs.insert({
        runId: "run-earlier",
        sessionId: "earlier",
        state: "running",
        route,
        modelRef: "fake/m",
        progressState: {},
        options: {},
        startedAt: T0,
      });
      store.inbox.take(seq, "run-earlier");
      store.runs.finish("run-earlier", "finished", T0, 0, { reply: "long ago" });
      // Only the run's expiry, not the inbox's: the payload step is skipped by clearing it first.
      sql.exec(`UPDATE inbox SET event = '{}' WHERE seq = ?`, seq);
      store.runs.prune(noPostgres(), Date.now(), [], (ids) => store.inbox.recordSettled(ids));
      expect(store.runs.get("run-earlier")).toBeUndefined();
      expect(physical(sql, seq)).toMatchObject({ state: "settled", reply: "long ago" });
    });
  });

  it("a run that ended before step 21 settled its events itself: nothing is read from it", async () => {
    const key = `agent:main:settled-by-run:migrated:${crypto.randomUUID()}`;
    await runInDurableObject(sessionStub(key), (_instance, state) => {
      recreateVersion1Object(state.storage.sql);
      migrateSessionSchema(state.storage, SESSION_MIGRATIONS.slice(0, 20));
      const store = new SessionStore(state.storage.sql);
      const seq = takenByRun(store, "before", "run-before", 1_000);
      store.runs.finish("run-before", "finished", 2_000, 0);
      migrateSessionSchema(state.storage);
      expect(new SessionStore(state.storage.sql).inbox.bySeq(seq)?.state).toBe("taken");
    });
  });
});

describe("a plain message end to end", () => {
  it("gets one reply, and its retry is a duplicate that runs nothing", async () => {
    const sessionKey = `agent:main:settled-by-run:e2e:${uniqueId("s").toLowerCase()}`;
    const channel = uniqueId("D");
    const scenario = newScenario("settled-by-run");
    await scriptModel(scenario, [{ type: "text", text: "The one answer." }]);
    const event = plainSlackDm(sessionKey, channel, `hello [scenario:${scenario}]`, "USETTLED");
    const stub = sessionStub(sessionKey);
    expect((await stub.accept(event)).status).toBe("accepted");
    await waitFor(async () => (await slackMessages(channel)).length >= 1, 20_000, "the reply");
    expect((await stub.accept(event)).status).toBe("duplicate");
    const read = await runInDurableObject(stub, (_instance, state) => {
      const store = new SessionStore(state.storage.sql);
      const row = store.inbox.byKey(event.envelope.dedupKey)!;
      return { row, stored: physical(state.storage.sql, row.seq).state };
    });
    expect(read.row).toMatchObject({ state: "settled", reply: "The one answer." });
    expect(read.stored).toBe("taken");
    // Nothing more arrives: one reply.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await slackMessages(channel)).map((message) => message.text)).toEqual([
      "The one answer.",
    ]);
  });
});
