import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { SessionDO } from "../../durable-objects/session.ts";
import { openRowsOf } from "../../durable-objects/session/open-rows.ts";
import type { SessionState } from "../../durable-objects/session/state.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { StepProfile } from "../../durable-objects/session/upkeep/step-profile.ts";
import { slackMessages } from "../channels/slack/helpers.ts";
import { modelRequests, scriptModel, sessionStub, waitFor, webchatEvent } from "./helpers.ts";

/**
 * Open inbox events and outbox chunks are found without an index (schema step 19): from sets of
 * their keys kept in memory (open-rows.ts) that are narrowed only by reads outside every
 * transaction, loaded again by a scan in a new isolate, and that keep each read to the open rows
 * however many tombstones and sent chunks the object keeps for 48 h.
 */

const HOUR = 60 * 60 * 1000;

function chunk(id: string, to: string, text = id) {
  return {
    id,
    runId: null,
    route: { channel: "slack", accountId: "ops", to },
    text,
    chunkIndex: 0,
    chunkCount: 1,
  };
}

/** Lets the narrowing queued by the reads so far run (open-rows.ts: a microtask after them). */
const narrowed = () => new Promise((resolve) => setTimeout(resolve, 0));

function liveState(instance: SessionDO): SessionState {
  return (instance as unknown as { s: SessionState }).s;
}

describe("finding open events and chunks without an index", () => {
  it("still finds an event and a chunk that a rolled-back transaction had settled", async () => {
    const key = `agent:main:open-rollback-${crypto.randomUUID()}`;
    await runInDurableObject(sessionStub(key), async (_instance, state) => {
      const store = new SessionStore(state.storage);
      const now = Date.now();
      const first = store.inbox.insert(webchatEvent(key, "first"), now)!;
      store.outbox.insert(chunk("c:first", "DROLLBACK"), now);
      expect(store.inbox.unsettledSeqs()).toEqual([first]);
      await narrowed();
      expect(openRowsOf(state.storage.sql).outbox.known).toBeDefined();

      // Settled inside a transaction that then throws: every read inside saw them settled, so
      // each queued the narrowing of its set.
      let later = 0;
      expect(() =>
        state.storage.transactionSync(() => {
          store.inbox.settle(first, "done", now);
          later = store.inbox.insert(webchatEvent(key, "later"), now)!;
          store.outbox.update("c:first", { state: "sent" }, now);
          store.outbox.insert(chunk("c:later", "DROLLBACK"), now);
          expect(store.inbox.byState("new").map((row) => row.seq)).toEqual([later]);
          expect(store.outbox.unsettled().map((row) => row.id)).toEqual(["c:later"]);
          expect(store.outbox.nextAt()).toBe(now);
          throw new Error("the step failed after settling");
        }),
      ).toThrow("the step failed after settling");
      await narrowed();

      // Storage went back; the sets never dropped what is open in committed storage.
      expect(store.inbox.byState("new").map((row) => row.seq)).toEqual([first]);
      expect(store.inbox.count("new")).toBe(1);
      expect(store.inbox.unsettledSeqs()).toEqual([first]);
      expect(store.outbox.unsettled().map((row) => row.id)).toEqual(["c:first"]);
      expect(store.outbox.runsInDelivery()).toEqual([]);
      await narrowed();
      expect(store.inbox.byState("new").map((row) => row.seq)).toEqual([first]);
      expect(store.outbox.unsettled().map((row) => row.id)).toEqual(["c:first"]);
      // Committed, settling narrows the sets: nothing open is left to find.
      store.inbox.settle(first, "done", now);
      store.outbox.update("c:first", { state: "sent" }, now);
      expect(store.inbox.countUnsettled()).toBe(0);
      expect(store.outbox.unsettled()).toEqual([]);
      await narrowed();
      expect(openRowsOf(state.storage.sql).inbox.known?.size).toBe(0);
      expect(openRowsOf(state.storage.sql).outbox.known?.size).toBe(0);
    });
  });

  it("finds the open events and chunks of an evicted isolate and answers and sends each once", async () => {
    const key = `agent:main:open-evict-${crypto.randomUUID()}`;
    const dm = `D${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
    const scenario = `open-evict-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(scenario, [{ type: "text", text: "Answered after the eviction." }]);
    await runInDurableObject(sessionStub(key), async (instance: SessionDO, state) => {
      const s = liveState(instance);
      // The isolate's sets are loaded (nothing open yet), then the event and the chunk open.
      expect(s.store.inbox.byState("new")).toEqual([]);
      expect(s.store.outbox.unsettled()).toEqual([]);
      await narrowed();
      expect(openRowsOf(state.storage.sql).outbox.known?.size).toBe(0);
      s.store.meta.set("sessionKey", key);
      s.store.inbox.insert(webchatEvent(key, `waiting [scenario:${scenario}]`), Date.now());
      s.store.outbox.insert(chunk("notice:evict:0", dm, "queued before the eviction"), Date.now());
      await state.storage.deleteAlarm();
    });
    await abortAllDurableObjects();

    // The next isolate knows nothing in memory: it finds both from storage, once each.
    await runInDurableObject(sessionStub(key), (_instance, state) =>
      state.storage.setAlarm(Date.now()),
    );
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () =>
        (await sessionStub(key).history()).some(
          (entry) => entry.text === "Answered after the eviction.",
        ) && (await slackMessages(dm)).length > 0,
      20_000,
      "the answer and the chunk",
    );
    await runDurableObjectAlarm(sessionStub(key));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await slackMessages(dm)).map((message) => message.text)).toEqual([
      "queued before the eviction",
    ]);
    expect(await modelRequests(scenario)).toHaveLength(1);
    const answers = (await sessionStub(key).history()).filter(
      (entry) => entry.text === "Answered after the eviction.",
    );
    expect(answers).toHaveLength(1);
  });

  it("reads only about the open rows of a busy session, however many tombstones it keeps", async () => {
    const key = `agent:main:open-busy-${crypto.randomUUID()}`;
    await runInDurableObject(sessionStub(key), async (_instance, state) => {
      const profile = new StepProfile();
      const store = new SessionStore(
        {
          sql: profile.meter(state.storage.sql),
          transactionSync: (work) => state.storage.transactionSync(work),
        },
        state.storage.sql,
      );
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      const rowsRead = (label: string, read: () => void): number => {
        profile.stepSync(label, read);
        profile.report("probe", key);
        const line = log.mock.calls.map((call) => String(call[0])).at(-1)!;
        return (JSON.parse(line) as { steps: Record<string, { rowsRead: number }> }).steps[label]!
          .rowsRead;
      };
      try {
        const t0 = Date.now() - HOUR;
        // 300 answered messages: their tombstones and sent chunks stay for 48 h.
        for (let n = 0; n < 300; n++) {
          const seq = store.inbox.insert(webchatEvent(key, `m${n}`), t0)!;
          store.outbox.insert(chunk(`c:${n}`, "DBUSY"), t0);
          store.outbox.update(`c:${n}`, { state: "sent" }, t0);
          store.inbox.settle(seq, "ok", t0);
        }
        const open = store.inbox.insert(webchatEvent(key, "still open"), t0)!;
        store.outbox.insert(chunk("c:open", "DBUSY"), t0);
        const readOpen = () => {
          expect(store.inbox.byState("new").map((row) => row.seq)).toEqual([open]);
          expect(store.outbox.unsettled().map((row) => row.id)).toEqual(["c:open"]);
        };

        // A new store (as a new isolate) scans once, then reads the open rows by key.
        new SessionStore(state.storage.sql);
        expect(rowsRead("first read", readOpen)).toBeGreaterThanOrEqual(600);
        await narrowed();
        const bounded = rowsRead("bounded read", readOpen);
        expect(bounded).toBeLessThanOrEqual(4);
        // A message answered after that is read once more (the read that finds it settled, and
        // the check outside transactions that drops it), then never again.
        for (let n = 0; n < 5; n++) {
          const seq = store.inbox.insert(webchatEvent(key, `more ${n}`), t0)!;
          store.outbox.insert(chunk(`c:more${n}`, "DBUSY"), t0);
          store.inbox.settle(seq, "ok", t0);
          store.outbox.update(`c:more${n}`, { state: "sent" }, t0);
          expect(rowsRead(`read ${n}`, readOpen)).toBeLessThanOrEqual(bounded + 2);
          await narrowed();
          expect(rowsRead(`read ${n} again`, readOpen)).toBe(bounded);
        }
      } finally {
        log.mockRestore();
      }
    });
  });
});
