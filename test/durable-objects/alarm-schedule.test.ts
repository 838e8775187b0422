import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { SessionRpc } from "../../durable-objects/session-api.ts";
import { SessionStore, type InboxRow } from "../../durable-objects/session/storage.ts";
import { WATCHDOG_MS } from "../../durable-objects/session/schedule.ts";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import type { Env } from "../../workers/env.ts";
import { scriptModel, sessionStub, waitFor, webchatEvent } from "./helpers.ts";

const fakeSlack = () => String((env as unknown as Env).FAKE_SLACK_URL);

/** A pass (alarm handler) is running in this object right now. */
function passRunning(instance: SessionRpc): boolean {
  return (instance as unknown as { s: { pumping: unknown } }).s.pumping !== null;
}

/**
 * The invariant: every stored piece of work has an alarm at or before the time it is due. New
 * events are due now; events queued behind a run when their debounce ends; a run left "running"
 * by a pass is resumed within the watchdog. `undefined` while a pass runs (it re-plans at its end).
 */
async function alarmViolations(key: string, debounceMs: number): Promise<string[] | undefined> {
  return runInDurableObject(sessionStub(key), async (instance, state) => {
    if (passRunning(instance)) return undefined;
    const store = new SessionStore(state.storage);
    const alarm = await state.storage.getAlarm();
    const now = Date.now();
    const parkedUntil = Number(store.meta.get("retryAt") ?? 0);
    const due: Array<{ what: string; at: number }> = [];
    for (const row of store.inbox.byState("new"))
      due.push({ what: `new event ${row.seq}`, at: Math.max(now, parkedUntil) });
    const running = store.runs.active();
    if (running)
      due.push({ what: `run ${running.runId}`, at: Math.max(now + WATCHDOG_MS, parkedUntil) });
    const queued: InboxRow[] = store.inbox.byState("queued");
    if (queued.length && !running) {
      const behind = queued.some((row) => row.prepared?.queuedBehindRun);
      const readyAt = behind
        ? Math.max(...queued.map((row) => row.receivedAt)) + debounceMs
        : queued[0]!.receivedAt;
      for (const row of queued)
        due.push({ what: `queued event ${row.seq}`, at: Math.max(readyAt, parkedUntil) });
    }
    return due
      .filter((item) => alarm === null || alarm > Math.max(item.at, now))
      .map(
        (item) =>
          `${key}: ${item.what} due at ${item.at} but the alarm is ${alarm === null ? "unset" : `at ${alarm} (+${alarm - now} ms)`}`,
      );
  });
}

/** Deterministic PRNG (mulberry32), so a failing burst can be replayed from its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("the alarm schedule", () => {
  it("wakes a debounced queue whose window passes while the outbox is being delivered", async () => {
    const key = `agent:main:alarm-debounce-${crypto.randomUUID()}`;
    const dm = `D${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
    // The command reply that triage queues goes to a slow Slack: delivering it outlasts the debounce.
    await fetch(`${fakeSlack()}/_control/script`, {
      method: "POST",
      body: JSON.stringify({ method: "chat.postMessage", channel: dm, delayMs: 1_500 }),
    });
    await runInDurableObject(sessionStub(key), async (_instance, state) => {
      const store = new SessionStore(state.storage);
      const now = Date.now();
      store.meta.set("sessionKey", key);
      store.meta.set("agentId", "main");
      store.meta.setJson("settings", { queue: { mode: "collect", debounceMs: 400 } });
      // A message that arrived during a run that has since ended: its debounce ends in 400 ms.
      const seq = store.inbox.insert(webchatEvent(key, "queued while the last run was busy"), now)!;
      store.inbox.prepare(seq, {
        text: "queued while the last run was busy",
        senderIsOwner: true,
        queuedBehindRun: true,
      });
      // A Slack DM command, not yet triaged: its reply goes through the outbox.
      const envelope = inboundEnvelopeSchema.parse({
        dedupKey: `slack:${dm}:status`,
        channel: "slack",
        chatType: "direct",
        peerId: dm,
        senderId: "UHUMAN1",
        text: "/status",
        receivedAt: now,
        route: { channel: "slack", to: dm },
      });
      store.inbox.insert({ envelope, agentId: "main", sessionKey: key }, now);
      await state.storage.setAlarm(now + 60_000);
    });
    expect(await runDurableObjectAlarm(sessionStub(key))).toBe(true);

    // The pass answered /status (slowly), then found the queue not ready and ended. The queued
    // message must be answered without anyone writing again.
    const answered = await waitFor(
      () =>
        runInDurableObject(sessionStub(key), (_instance, state) => {
          const store = new SessionStore(state.storage);
          const rows = store.inbox
            .byState("settled")
            .filter((row) => row.event.envelope.channel === "webchat");
          return rows.length ? rows[0]!.reply : undefined;
        }),
      8_000,
      "the queued message to be answered",
    );
    expect(answered).toContain("queued while the last run was busy");
  });

  it("keeps an alarm at or before every queued event's due time through random bursts", async () => {
    const seed = 0x5eed7;
    const random = seeded(seed);
    const sessions = Array.from({ length: 6 }, (_, index) => ({
      key: `agent:main:alarm-burst-${index}-${crypto.randomUUID()}`,
      scenario: `burst-${index}-${crypto.randomUUID().slice(0, 8)}`,
      mode: (["collect", "followup", "steer"] as const)[Math.floor(random() * 3)]!,
      debounceMs: [0, 30, 80, 150][Math.floor(random() * 4)]!,
      sent: [] as string[],
    }));
    for (const session of sessions) {
      const stub = sessionStub(session.key);
      await runInDurableObject(stub, (_instance, state) => {
        const store = new SessionStore(state.storage);
        store.meta.setJson("settings", {
          queue: { mode: session.mode, debounceMs: session.debounceMs },
        });
      });
      // Model turns of random length, so events keep arriving while runs are busy.
      await scriptModel(
        session.scenario,
        Array.from({ length: 40 }, () => ({
          type: "text",
          text: "ok",
          delayMs: Math.floor(random() * 150),
        })),
      );
    }

    const violations: string[] = [];
    const check = async (session: (typeof sessions)[number]) => {
      const found = await alarmViolations(session.key, session.debounceMs);
      if (!found?.length) return;
      // An alarm that has just fired is no longer stored while its handler waits for the object:
      // a real violation is one that is still there once that handler had its chance to run.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const again = await alarmViolations(session.key, session.debounceMs);
      if (again)
        violations.push(
          ...found.filter((line) =>
            again.some((other) => other.split(" due at")[0] === line.split(" due at")[0]),
          ),
        );
    };
    for (let i = 0; i < 80; i++) {
      const session = sessions[Math.floor(random() * sessions.length)]!;
      const dedup = `burst-${seed}-${i}-${crypto.randomUUID()}`;
      session.sent.push(`webchat:${dedup}`);
      expect(
        await sessionStub(session.key).accept(
          webchatEvent(session.key, `message ${i} [scenario:${session.scenario}]`, dedup),
        ),
      ).toEqual({ status: "accepted" });
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 40)));
      if (random() < 0.4) await check(sessions[Math.floor(random() * sessions.length)]!);
    }

    // No more messages: every event must still be answered, and the invariant hold on the way.
    for (const session of sessions) {
      await waitFor(
        async () => {
          await check(session);
          return runInDurableObject(sessionStub(session.key), (_instance, state) => {
            const store = new SessionStore(state.storage);
            return session.sent.every(
              (dedupKey) => store.inbox.byKey(dedupKey)?.state === "settled",
            );
          });
        },
        10_000,
        `every event of ${session.key} (${session.mode}, debounce ${session.debounceMs} ms) to be answered`,
      );
      const replies = await runInDurableObject(sessionStub(session.key), (_instance, state) => {
        const store = new SessionStore(state.storage);
        return session.sent.map((dedupKey) => store.inbox.byKey(dedupKey)?.reply ?? null);
      });
      expect(replies.every((reply) => reply !== null)).toBe(true);
    }
    expect(violations).toEqual([]);
  }, 90_000);
});
