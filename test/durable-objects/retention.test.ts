import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import {
  nextPruneAt,
  prune,
  pruneSessionStorage,
  PRUNE_EVERY_MS,
  type RetentionPolicy,
} from "../../durable-objects/session/upkeep/retention.ts";
import { nextAlarmAt } from "../../durable-objects/session/schedule.ts";
import type { SessionState } from "../../durable-objects/session/state.ts";
import type { SessionDO } from "../../durable-objects/session.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { sessionStub, webchatEvent } from "./helpers.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = 1_800_000_000_000;
const route = { channel: "testchan", accountId: "default", to: "peer" };

/** The suite's defaults (session.maintenance): 30 d, 500 entries, 30 d. */
const defaults = parseConfig({}).session.maintenance;

function policy(overrides: Partial<RetentionPolicy> = {}): RetentionPolicy {
  return {
    activeSessionId: "live",
    archived: false,
    deadLetterMs: defaults.pruneAfter,
    maxEntries: defaults.maxEntries,
    archiveMs: defaults.resetArchiveRetention,
    ...overrides,
  };
}

/** A fresh SessionDO's storage (unique key per test) with a store over it. */
function withStorage<T>(
  name: string,
  work: (
    store: SessionStore,
    sql: SqlStorage,
    state: DurableObjectState,
    instance: SessionDO,
  ) => T | Promise<T>,
): Promise<T> {
  const key = `agent:main:retention:${name}:${crypto.randomUUID()}`;
  return runInDurableObject(sessionStub(key), (instance: SessionDO, state) =>
    work(new SessionStore(state.storage.sql), state.storage.sql, state, instance),
  );
}

function addRun(
  store: SessionStore,
  runId: string,
  sessionId: string,
  startedAt: number,
  tokens: number,
  finishedAt: number | null,
): void {
  store.runs.insert({
    runId,
    sessionId,
    state: "running",
    route,
    modelRef: null,
    progressState: {},
    options: {},
    startedAt,
  });
  store.runs.addUsage(runId, "fake/model", {
    inputTokens: tokens,
    outputTokens: tokens,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  if (finishedAt !== null) store.runs.finish(runId, "finished", finishedAt, 0);
}

describe("SessionDO storage bounds (session.maintenance)", () => {
  it("reads OpenClaw's durations", () => {
    expect(defaults).toMatchObject({
      pruneAfter: 30 * DAY,
      maxEntries: 500,
      resetArchiveRetention: 30 * DAY,
    });
    const custom = parseConfig({
      session: { maintenance: { pruneAfter: "36h", resetArchiveRetention: false } },
    }).session.maintenance;
    expect(custom).toMatchObject({ pruneAfter: 36 * HOUR, resetArchiveRetention: false });
    expect(() => parseConfig({ session: { maintenance: { pruneAfter: "soon" } } })).toThrow(
      /session\.maintenance\.pruneAfter/,
    );
  });

  it("outbox: dead letters live pruneAfter and at most maxEntries; sent chunks 48 h; chunks in delivery stay", async () => {
    await withStorage("outbox", (store, sql) => {
      const add = (id: string, state: "dead" | "sent" | "pending", at: number) => {
        store.outbox.insert({ id, runId: null, route, text: id, chunkIndex: 0, chunkCount: 1 }, at);
        if (state !== "pending") store.outbox.update(id, { state }, at);
      };
      add("dead-old", "dead", T0);
      for (let i = 0; i < 4; i++) add(`dead-${i}`, "dead", T0 + 20 * DAY + i);
      add("sent-old", "sent", T0 + 27 * DAY);
      add("sent-new", "sent", T0 + 30 * DAY);
      add("pending-ancient", "pending", T0);
      pruneSessionStorage(sql, policy({ maxEntries: 3 }), T0 + 30 * DAY + HOUR);
      expect(
        store.outbox
          .rows()
          .map((row) => row.id)
          .sort(),
      ).toEqual(["dead-1", "dead-2", "dead-3", "pending-ancient", "sent-new"]);
    });
  });

  it("transcript without DATABASE_URL: compacted rows and earlier sessions go after resetArchiveRetention; the model's context stays", async () => {
    await withStorage("transcript", (store, sql) => {
      const earlier = store.transcript.append(
        "earlier",
        null,
        { role: "user", content: "old session" },
        T0,
      );
      const compacted = store.transcript.append(
        "live",
        null,
        { role: "user", content: "summarised" },
        T0,
      );
      const recentEarlier = store.transcript.append(
        "earlier",
        null,
        { role: "user", content: "old session, recent" },
        T0 + 25 * DAY,
      );
      const context = store.transcript.append(
        "live",
        null,
        { role: "user", content: "still in context" },
        T0,
      );
      store.transcript.markCompacted("live", context);
      pruneSessionStorage(sql, policy(), T0 + 31 * DAY);
      const left = [...store.transcript.recent("live"), ...store.transcript.recent("earlier")]
        .map((row) => row.seq)
        .sort((a, b) => a - b);
      expect(left).toEqual([recentEarlier, context]);
      expect(left).not.toContain(earlier);
      expect(left).not.toContain(compacted);
      // `resetArchiveRetention: false` keeps the archive.
      pruneSessionStorage(sql, policy({ archiveMs: false }), T0 + 365 * DAY);
      expect(store.transcript.recent("earlier").map((row) => row.seq)).toEqual([recentEarlier]);
    });
  });

  it("runs: the current session keeps its newest maxEntries runs and folds the rest into its totals; earlier sessions' runs go 48 h after they finish", async () => {
    await withStorage("runs", (store, sql) => {
      for (let i = 0; i < 6; i++) addRun(store, `live-${i}`, "live", T0 + i, 10 + i, T0 + i + 1);
      addRun(store, "live-running", "live", T0 + 10, 100, null);
      addRun(store, "earlier-done", "earlier", T0 - DAY, 7, T0 - DAY);
      addRun(store, "earlier-recent", "earlier", T0 - HOUR, 7, T0 - HOUR);
      const before = store.runs.sessionTotals("live");
      pruneSessionStorage(sql, policy({ maxEntries: 3 }), T0 + DAY + HOUR);
      const runIds = sql
        .exec<{ run_id: string }>(`SELECT run_id FROM runs ORDER BY run_id`)
        .toArray()
        .map((row) => row.run_id);
      expect(runIds).toEqual(["earlier-recent", "live-4", "live-5", "live-running"]);
      expect(store.runs.sessionTotals("live")).toEqual(before);
      expect(before.runs).toBe(7);
    });
  });

  it("runs and transcript wait for the mirror when DATABASE_URL is set", async () => {
    await withStorage("archived", (store, sql) => {
      addRun(store, "earlier-unmirrored", "earlier", T0, 5, T0);
      const row = store.transcript.append(
        "earlier",
        null,
        { role: "user", content: "not mirrored yet" },
        T0,
      );
      pruneSessionStorage(sql, policy({ archived: true }), T0 + 365 * DAY);
      expect(store.runs.get("earlier-unmirrored")).toBeDefined();
      expect(store.transcript.recent("earlier").map((entry) => entry.seq)).toEqual([row]);
    });
  });

  it("meta: summaries and folded totals of earlier sessions and the ack state of settled events are dropped", async () => {
    await withStorage("meta", (store, sql) => {
      store.meta.set("summary:earlier", "old summary");
      store.meta.set("summary:live", "live summary");
      store.meta.setJson("foldedRuns:earlier", { inputTokens: 1, outputTokens: 1, runs: 1 });
      const settled = store.inbox.insert(webchatEvent("k", "done", "meta-settled"), T0)!;
      store.inbox.settle(settled, "ok", T0);
      const waiting = store.inbox.insert(webchatEvent("k", "waiting", "meta-waiting"), T0)!;
      store.meta.setJson(`progress:${settled}`, { reaction: "eyes" });
      store.meta.setJson(`progress:${waiting}`, { reaction: "eyes" });
      pruneSessionStorage(sql, policy(), T0 + HOUR);
      const keys = sql
        .exec<{ key: string }>(`SELECT key FROM meta WHERE key LIKE '%:%' ORDER BY key`)
        .toArray()
        .map((row) => row.key);
      expect(keys).toEqual([`progress:${waiting}`, "summary:live"]);
    });
  });

  it("group history holds at most the conversation's historyLimit entries", async () => {
    await withStorage("history", (store) => {
      for (let i = 0; i < 8; i++) store.groupHistory.push("U1", `message ${i}`, T0 + i, 5);
      expect(store.groupHistory.take().map((entry) => entry.text)).toEqual([
        "message 3",
        "message 4",
        "message 5",
        "message 6",
        "message 7",
      ]);
      expect(store.groupHistory.take()).toEqual([]);
    });
  });

  it("an idle session wakes to drop an expired dead letter, and the sweep runs from the alarm pass", async () => {
    await withStorage("schedule", (store, sql, _state, instance) => {
      const s = (instance as unknown as { s: SessionState }).s;
      const now = Date.now();
      store.outbox.insert(
        { id: "dead-1", runId: null, route, text: "x", chunkIndex: 0, chunkCount: 1 },
        now - 29 * DAY,
      );
      store.outbox.update("dead-1", { state: "dead" }, now - 29 * DAY);
      expect(nextPruneAt(sql, policy(), now)).toBe(now - 29 * DAY + 30 * DAY);
      // Nothing else is stored: the dead letter's expiry is the object's next alarm.
      expect(nextAlarmAt(s, now)).toBe(now + DAY);
      store.meta.set("prunedAt", "0");
      prune(s, now + DAY + 1);
      expect(store.outbox.rows("dead")).toEqual([]);
      // At most hourly.
      store.outbox.insert(
        { id: "dead-2", runId: null, route, text: "y", chunkIndex: 0, chunkCount: 1 },
        now - 40 * DAY,
      );
      store.outbox.update("dead-2", { state: "dead" }, now - 40 * DAY);
      prune(s, now + DAY + PRUNE_EVERY_MS / 2);
      expect(store.outbox.rows("dead")).toHaveLength(1);
    });
  });
});
