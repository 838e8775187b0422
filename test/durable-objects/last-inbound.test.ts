import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { lastInteractionAt, lastRoute } from "../../durable-objects/session/last-inbound.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { pruneSessionStorage } from "../../durable-objects/session/upkeep/retention.ts";
import { configWith, sessionWithConfig } from "./budget-helpers.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "./helpers.ts";

/**
 * The last accepted message's route and a person's last message time share one meta row
 * (last-inbound.ts, written by triage): idle resets count from it, it survives an eviction between
 * triage and the run, a new session forgets it, and objects from before keep their old keys.
 */

const MIN = 60_000;
const ROUTE = { channel: "webchat", to: "tester" };

function meta(sessionKey: string) {
  return runInDurableObject(sessionStub(sessionKey), (_instance, state) => {
    const store = new SessionStore(state.storage.sql);
    return {
      sessionId: store.meta.get("sessionId"),
      startedAt: Number(store.meta.get("sessionStartedAt")),
      lastInteractionAt: lastInteractionAt(store),
      lastRoute: lastRoute(store),
      legacyKeys: [store.meta.get("lastRoute"), store.meta.get("lastInteractionAt")].filter(
        Boolean,
      ),
    };
  });
}

/** Moves the session's start and the last message back in time, as if that much time had passed. */
function backdate(sessionKey: string, ago: { started: number; lastMessage: number }) {
  return runInDurableObject(sessionStub(sessionKey), (_instance, state) => {
    const store = new SessionStore(state.storage.sql).meta;
    store.set("sessionStartedAt", String(Date.now() - ago.started));
    // The last message's time is in its inbox row (its triage decision), or, once the sweep
    // cleared that row's payload, in meta.
    const folded = store.getJson("lastInbound");
    if (folded?.userAt !== undefined)
      store.setJson("lastInbound", { ...folded, userAt: Date.now() - ago.lastMessage });
    state.storage.sql.exec(
      `UPDATE inbox SET decision = json_set(decision, '$.userAt', ?)
         WHERE json_extract(decision, '$.userAt') IS NOT NULL`,
      Date.now() - ago.lastMessage,
    );
  });
}

function lastInboundMeta(sessionKey: string) {
  return runInDurableObject(sessionStub(sessionKey), (_instance, state) =>
    new SessionStore(state.storage.sql).meta.getJson("lastInbound"),
  );
}

async function say(sessionKey: string, text: string) {
  await collectRunEvents(await sessionStub(sessionKey).chat(webchatEvent(sessionKey, text)));
}

describe("the session's last inbound message", () => {
  it("keeps an idle session while its last message is recent, and resets it once it is not", async () => {
    const key = `agent:main:last-inbound-idle-${crypto.randomUUID()}`;
    await sessionWithConfig(
      key,
      configWith({ session: { reset: { mode: "idle", idleMinutes: 30 } } }),
    );
    const sent = Date.now();
    await say(key, "hello");
    const first = await meta(key);
    expect(first.lastRoute).toMatchObject(ROUTE);
    // Triaged just before its run started the object's first session: that session keeps it.
    expect(first.lastInteractionAt).toBeGreaterThanOrEqual(sent);
    expect(first.lastInteractionAt).toBeLessThanOrEqual(first.startedAt);
    expect(first.legacyKeys).toEqual([]);

    // Started an hour ago, last written to 10 minutes ago: not idle (the start alone would be).
    await backdate(key, { started: 60 * MIN, lastMessage: 10 * MIN });
    const before = Date.now();
    await say(key, "still here");
    const kept = await meta(key);
    expect(kept.sessionId).toBe(first.sessionId);
    expect(kept.lastInteractionAt).toBeGreaterThanOrEqual(before);

    // 31 minutes of silence: the next message starts a new session, and counts as its first.
    await backdate(key, { started: 60 * MIN, lastMessage: 31 * MIN });
    await say(key, "back again");
    const reset = await meta(key);
    expect(reset.sessionId).not.toBe(first.sessionId);
    expect(reset.lastInteractionAt).toBeGreaterThanOrEqual(reset.startedAt);

    // /new forgets the ended session's last message.
    await say(key, "/new");
    const renewed = await meta(key);
    expect(renewed.sessionId).not.toBe(reset.sessionId);
    expect(renewed.lastInteractionAt).toBeUndefined();
    expect(renewed.lastRoute).toMatchObject(ROUTE);
  });

  it("keeps the message's time through an eviction between its triage and its run", async () => {
    const key = `agent:main:last-inbound-crash-${crypto.randomUUID()}`;
    const scenario = `last-inbound-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(scenario, [
      { type: "hang" },
      { type: "text", text: "First answer." },
      { type: "text", text: "Second answer." },
    ]);
    const queue = (debounceMs: number) =>
      configWith({ messages: { queue: { mode: "followup", debounceMs } } });
    // A long debounce holds the second message queued behind the first run.
    const stub = await sessionWithConfig(key, queue(60 * MIN));
    await stub.accept(webchatEvent(key, `first [scenario:${scenario}]`));
    await waitFor(async () => (await modelRequests(scenario)).length >= 1, 15_000, "run 1");
    const second = webchatEvent(key, `second [scenario:${scenario}]`);
    await sessionStub(key).accept(second);
    const queued = await waitFor(
      () =>
        runInDurableObject(sessionStub(key), (_instance, state) => {
          const store = new SessionStore(state.storage.sql);
          const row = store.inbox.byKey(second.envelope.dedupKey);
          return row?.state === "queued" && lastInteractionAt(store);
        }),
      15_000,
      "the second message queued",
    );
    await abortAllDurableObjects();

    // The next isolate resumes the first run, then answers the second, each once.
    await sessionWithConfig(key, queue(0));
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () =>
        (await sessionStub(key).history()).some((entry) => entry.text === "Second answer."),
      20_000,
      "the second answer",
    );
    const answers = (await sessionStub(key).history())
      .filter((entry) => entry.role === "assistant")
      .map((entry) => entry.text);
    expect(answers).toEqual(["First answer.", "Second answer."]);
    expect(await modelRequests(scenario)).toHaveLength(3);
    // The time written with the second message's triage, not lost with the isolate.
    const after = await meta(key);
    expect(after.lastInteractionAt).toBe(queued);
    expect(after.legacyKeys).toEqual([]);
  });

  it("keeps the route and time once the sweep cleared the message's payload, and after an eviction", async () => {
    const key = `agent:main:last-inbound-sweep-${crypto.randomUUID()}`;
    // The config is the isolate's: a new one after an eviction gets it again.
    const idle = () =>
      sessionWithConfig(key, configWith({ session: { reset: { mode: "idle", idleMinutes: 30 } } }));
    await idle();
    await say(key, "hello");
    const before = await meta(key);
    expect(before.lastRoute).toMatchObject(ROUTE);
    expect(before.lastInteractionAt).toBeDefined();
    // Nothing written to meta for the message: its inbox row holds both facts.
    expect(await lastInboundMeta(key)).toBeUndefined();

    // Two hours on, the sweep clears the settled event's payload (the route with it).
    const payload = await runInDurableObject(sessionStub(key), (_instance, state) => {
      pruneSessionStorage(
        state.storage.sql,
        {
          activeSessionId: new SessionStore(state.storage.sql).meta.get("sessionId"),
          archived: false,
          deadLetterMs: 30 * 24 * 60 * MIN,
          maxEntries: 500,
          archiveMs: false,
        },
        Date.now() + 120 * MIN,
      );
      return state.storage.sql
        .exec<{ event: string }>(`SELECT event FROM inbox ORDER BY seq DESC LIMIT 1`)
        .one().event;
    });
    expect(payload).toBe("{}");
    expect(await lastInboundMeta(key)).toMatchObject({ route: ROUTE });
    await abortAllDurableObjects();
    await idle();
    const after = await meta(key);
    expect(after.lastRoute).toEqual(before.lastRoute);
    expect(after.lastInteractionAt).toBe(before.lastInteractionAt);

    // The idle reset still counts from that message: 10 minutes ago keeps the session…
    await backdate(key, { started: 60 * MIN, lastMessage: 10 * MIN });
    await say(key, "still here");
    expect((await meta(key)).sessionId).toBe(before.sessionId);
    // …and 31 minutes of silence ends it.
    await runInDurableObject(sessionStub(key), (_instance, state) => {
      pruneSessionStorage(
        state.storage.sql,
        {
          activeSessionId: new SessionStore(state.storage.sql).meta.get("sessionId"),
          archived: false,
          deadLetterMs: 30 * 24 * 60 * MIN,
          maxEntries: 500,
          archiveMs: false,
        },
        Date.now() + 120 * MIN,
      );
    });
    await abortAllDurableObjects();
    await idle();
    await backdate(key, { started: 60 * MIN, lastMessage: 31 * MIN });
    await say(key, "back again");
    const reset = await meta(key);
    expect(reset.sessionId).not.toBe(before.sessionId);
    expect(reset.lastInteractionAt).toBeGreaterThanOrEqual(reset.startedAt);
  });

  it("reads an object's keys from before lastInbound until a message writes it", async () => {
    const key = `agent:main:last-inbound-legacy-${crypto.randomUUID()}`;
    await say(key, "hello");
    const old = { channel: "slack", accountId: "default", to: "D0OLD" };
    const at = Date.now() - 5 * MIN;
    await runInDurableObject(sessionStub(key), (_instance, state) => {
      const store = new SessionStore(state.storage.sql).meta;
      // Triaged before lastInbound: no decision carried the time, meta held the facts.
      state.storage.sql.exec(`UPDATE inbox SET decision = json_remove(decision, '$.userAt')`);
      store.delete("lastInbound");
      store.setJson("lastRoute", old);
      store.set("lastInteractionAt", String(at));
    });
    expect(await meta(key)).toMatchObject({ lastRoute: old, lastInteractionAt: at });
    await say(key, "again");
    const now = await meta(key);
    expect(now.lastRoute).toMatchObject(ROUTE);
    expect(now.lastInteractionAt).toBeGreaterThan(at);
  });
});
