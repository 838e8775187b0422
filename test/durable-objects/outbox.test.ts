import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import {
  deliverDueOutbox,
  UNDELIVERED_NOTICE,
} from "../../durable-objects/session/outbox/deliver-due.ts";
import type {
  ChannelAdapter,
  OutboundMessage,
  ReconcileResult,
  SendResult,
} from "../../functions/channels/adapter.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { env } from "cloudflare:test";
import { sessionStub } from "./helpers.ts";

/**
 * The outbox against a scripted channel: each test scripts what "the platform" answers per send
 * and checks what the outbox records and how often it sends. The outbox and its SQLite are real.
 */
type Answers = Array<SendResult | "throw"> | Record<string, Array<SendResult | "throw">>;

function scriptedChannel(
  answers: Answers,
  options: { reconcile?: Array<ReconcileResult | "throw"> } = {},
) {
  const sent: OutboundMessage[] = [];
  const reconciled: OutboundMessage[] = [];
  const adapter: ChannelAdapter = {
    id: "scripted",
    textChunkLimit: () => 4000,
    async send(message) {
      sent.push(message);
      const queue = Array.isArray(answers) ? answers : (answers[message.id] ?? []);
      const answer = queue.shift() ?? { ok: true, platformMessageId: `m${sent.length}` };
      if (answer === "throw") throw new Error("connection reset");
      return answer;
    },
    ...(options.reconcile
      ? {
          async reconcile(message: OutboundMessage) {
            reconciled.push(message);
            const answer = options.reconcile!.shift() ?? { outcome: "missing" as const };
            if (answer === "throw") throw new Error("history unavailable");
            return answer;
          },
        }
      : {}),
  };
  return { adapter, sent, reconciled };
}

const route = { channel: "scripted", accountId: "default", to: "C1" };

async function withStore<T>(name: string, work: (store: SessionStore) => Promise<T>): Promise<T> {
  return runInDurableObject(sessionStub(`agent:main:outbox-${name}`), async (_instance, state) =>
    work(new SessionStore(state.storage.sql)),
  );
}

function deliver(
  store: SessionStore,
  adapter: ChannelAdapter,
  now: number,
  maxAttempts = 3,
  maxBackoffMs = 60_000,
) {
  return deliverDueOutbox({
    store,
    adapterFor: (channel) => (channel === adapter.id ? adapter : undefined),
    ctx: { env, config: configFromEnv(env) },
    policy: { maxAttempts, maxBackoffMs },
    progressStateFor: () => undefined,
    now: () => now,
    random: () => 0.5,
  });
}

describe("outbox", () => {
  it("retries a rate-limited chunk after Retry-After, then sends it once", async () => {
    await withStore("retry", async (store) => {
      const { adapter, sent } = scriptedChannel([
        { ok: false, retryable: true, retryAfterMs: 7_000, error: "ratelimited" },
      ]);
      store.outbox.insert(
        { id: "r1:0", runId: "r1", route, text: "hi", chunkIndex: 0, chunkCount: 1 },
        1_000,
      );
      await deliver(store, adapter, 1_000);
      expect(sent).toHaveLength(1);
      const [row] = store.outbox.rows();
      expect(row).toMatchObject({ state: "pending", attempts: 1, nextAt: 8_000 });
      await deliver(store, adapter, 7_999);
      expect(sent).toHaveLength(1);
      await deliver(store, adapter, 8_000);
      expect(sent).toHaveLength(2);
      expect(store.outbox.rows()[0]).toMatchObject({ state: "sent", platformId: "m2" });
      await deliver(store, adapter, 100_000);
      expect(sent).toHaveLength(2);
    });
  });

  it("keeps later chunks of a reply behind a chunk that is waiting to retry", async () => {
    await withStore("order", async (store) => {
      const { adapter, sent } = scriptedChannel([
        { ok: false, retryable: true, retryAfterMs: 1_000, error: "429" },
      ]);
      store.outbox.insert(
        { id: "r2:0", runId: "r2", route, text: "part 1", chunkIndex: 0, chunkCount: 2 },
        0,
      );
      store.outbox.insert(
        { id: "r2:1", runId: "r2", route, text: "part 2", chunkIndex: 1, chunkCount: 2 },
        0,
      );
      await deliver(store, adapter, 0);
      expect(sent.map((m) => m.text)).toEqual(["part 1"]);
      await deliver(store, adapter, 1_000);
      expect(sent.map((m) => m.text)).toEqual(["part 1", "part 1", "part 2"]);
    });
  });

  it("dead-letters a chunk after the attempt bound and on a permanent error", async () => {
    await withStore("dead", async (store) => {
      const failing = { ok: false as const, retryable: true, error: "503" };
      const { adapter, sent } = scriptedChannel({
        "r3:0": [failing, failing, failing],
        "r4:0": [{ ok: false, retryable: false, error: "channel_not_found" }],
      });
      store.outbox.insert(
        { id: "r3:0", runId: "r3", route, text: "a", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      store.outbox.insert(
        { id: "r4:0", runId: "r4", route, text: "b", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      const dead: string[] = [];
      for (let t = 0; t < 10; t++)
        dead.push(
          ...(await deliver(store, adapter, t * 120_000)).map((d) => `${d.row.id}: ${d.reason}`),
        );
      expect(sent.filter((m) => m.id === "r3:0")).toHaveLength(3);
      expect(sent.filter((m) => m.id === "r4:0")).toHaveLength(1);
      expect(dead.sort()).toEqual([
        "r3:0: gave up after 3 attempts: 503",
        "r4:0: channel_not_found",
      ]);
      expect(
        store.outbox
          .rows("dead")
          .map((row) => row.id)
          .sort(),
      ).toEqual(["r3:0", "r4:0"]);
    });
  });

  it("on an idempotent platform, sends a chunk whose outcome is unknown again under the same id, never reconciles, and stops at the bound", async () => {
    await withStore("idempotent", async (store) => {
      const unknown = { ok: false as const, outcomeUnknown: true as const, error: "timed out" };
      const { adapter, sent, reconciled } = scriptedChannel(
        { "r9:0": [unknown], "r10:0": [unknown, unknown, unknown] },
        { reconcile: [] },
      );
      const idempotent: ChannelAdapter = { ...adapter, idempotentSends: true };
      store.outbox.insert(
        { id: "r9:0", runId: "r9", route, text: "answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      store.outbox.insert(
        { id: "r10:0", runId: "r10", route, text: "lost", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      const dead: string[] = [];
      for (let t = 0; t < 10; t++)
        dead.push(
          ...(await deliver(store, idempotent, t * 120_000)).map((d) => `${d.row.id}: ${d.reason}`),
        );
      expect(sent.filter((m) => m.id === "r9:0")).toHaveLength(2);
      expect(sent.filter((m) => m.id === "r10:0")).toHaveLength(3);
      expect(reconciled).toHaveLength(0);
      expect(store.outbox.rows().find((row) => row.id === "r9:0")).toMatchObject({ state: "sent" });
      expect(dead).toEqual(["r10:0: outcome unknown after 3 attempts: timed out"]);
    });
  });

  it("never re-sends a chunk whose outcome is unknown when the platform says it arrived", async () => {
    await withStore("reconcile-found", async (store) => {
      const { adapter, sent, reconciled } = scriptedChannel(["throw"], {
        reconcile: [{ outcome: "landed", platformMessageId: "ts-1" }],
      });
      store.outbox.insert(
        { id: "r5:0", runId: "r5", route, text: "answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      await deliver(store, adapter, 0);
      expect(store.outbox.rows()[0]!.state).toBe("unknown");
      await deliver(store, adapter, 120_000);
      expect(sent).toHaveLength(1);
      expect(reconciled).toHaveLength(1);
      expect(store.outbox.rows()[0]).toMatchObject({ state: "sent", platformId: "ts-1" });
    });
  });

  it("sends again only when reconciling shows the first attempt never arrived", async () => {
    await withStore("reconcile-missing", async (store) => {
      const { adapter, sent } = scriptedChannel(
        [{ ok: false, outcomeUnknown: true, error: "timeout" }],
        { reconcile: ["throw", { outcome: "missing" }] },
      );
      store.outbox.insert(
        { id: "r6:0", runId: "r6", route, text: "answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      await deliver(store, adapter, 0);
      await deliver(store, adapter, 120_000); // reconcile fails: ask again later, do not send
      expect(sent).toHaveLength(1);
      await deliver(store, adapter, 240_000); // reconcile: not there → send
      expect(sent).toHaveLength(2);
      expect(store.outbox.rows()[0]!.state).toBe("sent");
    });
  });

  it("a crash mid-send (row left 'sending') on a channel that cannot reconcile is not repeated", async () => {
    await withStore("crash", async (store) => {
      const { adapter, sent } = scriptedChannel([]);
      store.outbox.insert(
        { id: "r7:0", runId: "r7", route, text: "answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      store.outbox.update("r7:0", { state: "sending", attempts: 1 }, 0);
      const dead = await deliver(store, adapter, 1);
      expect(sent).toHaveLength(0);
      expect(dead[0]?.reason).toContain("not re-sent");
    });
  });

  it("keeps later chunks waiting across alarm passes while an earlier chunk waits out its Retry-After", async () => {
    await withStore("order-passes", async (store) => {
      const { adapter, sent } = scriptedChannel([
        { ok: false, retryable: true, retryAfterMs: 5_000, error: "429" },
      ]);
      store.outbox.insert(
        { id: "r8:0", runId: "r8", route, text: "part 1", chunkIndex: 0, chunkCount: 2 },
        0,
      );
      store.outbox.insert(
        { id: "r8:1", runId: "r8", route, text: "part 2", chunkIndex: 1, chunkCount: 2 },
        0,
      );
      await deliver(store, adapter, 0);
      // An alarm pass before the Retry-After (another event woke the session): part 2 must not go first.
      await deliver(store, adapter, 1_000);
      expect(sent.map((m) => m.text)).toEqual(["part 1"]);
      expect(store.outbox.nextAt()).toBe(5_000);
      await deliver(store, adapter, 5_000);
      expect(sent.map((m) => m.text)).toEqual(["part 1", "part 1", "part 2"]);
    });
  });

  it("never lets a later reply of the session overtake an earlier one that is blocked", async () => {
    await withStore("order-replies", async (store) => {
      const { adapter, sent } = scriptedChannel({
        "run:a:0": [{ ok: false, retryable: true, retryAfterMs: 3_000, error: "429" }],
      });
      store.outbox.insert(
        { id: "run:a:0", runId: "a", route, text: "first answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      store.outbox.insert(
        {
          id: "notice:7:0",
          runId: null,
          route,
          text: "a command reply",
          chunkIndex: 0,
          chunkCount: 1,
        },
        0,
      );
      store.outbox.insert(
        { id: "run:b:0", runId: "b", route, text: "second answer", chunkIndex: 0, chunkCount: 1 },
        1,
      );
      await deliver(store, adapter, 0);
      await deliver(store, adapter, 1_000);
      await deliver(store, adapter, 2_000);
      expect(sent.map((m) => m.text)).toEqual(["first answer"]);
      await deliver(store, adapter, 3_000);
      expect(sent.map((m) => m.text)).toEqual([
        "first answer",
        "first answer",
        "a command reply",
        "second answer",
      ]);
    });
  });

  it("keeps a later reply behind an earlier one whose outcome is still being reconciled", async () => {
    await withStore("order-unknown", async (store) => {
      const { adapter, sent } = scriptedChannel(
        { "run:c:0": ["throw"] },
        { reconcile: ["throw", { outcome: "landed", platformMessageId: "ts-c" }] },
      );
      store.outbox.insert(
        { id: "run:c:0", runId: "c", route, text: "maybe landed", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      store.outbox.insert(
        { id: "run:d:0", runId: "d", route, text: "next", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      await deliver(store, adapter, 0);
      await deliver(store, adapter, 120_000); // reconcile cannot tell yet: still blocked
      expect(sent.map((m) => m.text)).toEqual(["maybe landed"]);
      await deliver(store, adapter, 240_000);
      expect(sent.map((m) => m.text)).toEqual(["maybe landed", "next"]);
    });
  });

  it("honours a Retry-After longer than maxBackoffMs instead of cutting it", async () => {
    await withStore("long-retry-after", async (store) => {
      const { adapter, sent } = scriptedChannel([
        { ok: false, retryable: true, retryAfterMs: 300_000, error: "429" },
      ]);
      store.outbox.insert(
        { id: "r9:0", runId: "r9", route, text: "hi", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      await deliver(store, adapter, 0, 3, 60_000);
      expect(store.outbox.rows()[0]).toMatchObject({ state: "pending", nextAt: 300_000 });
      await deliver(store, adapter, 299_999, 3, 60_000);
      expect(sent).toHaveLength(1);
      await deliver(store, adapter, 300_000, 3, 60_000);
      expect(sent).toHaveLength(2);
    });
  });

  it("does not re-send an untraceable reply the platform would not de-duplicate; tells the user once instead", async () => {
    await withStore("untraceable", async (store) => {
      const { adapter, sent } = scriptedChannel(
        { "s1:0": ["throw"], "s1:0:undelivered": ["throw"] },
        {
          reconcile: [
            { outcome: "untraceable", reason: "no trace", idempotent: false },
            { outcome: "untraceable", reason: "no trace", idempotent: false },
          ],
        },
      );
      store.outbox.insert(
        { id: "s1:0", runId: null, route, text: "slash answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      await deliver(store, adapter, 0);
      const dead = await deliver(store, adapter, 120_000);
      expect(dead.map((d) => d.reason)).toEqual(["outcome unknown; no trace; not re-sent"]);
      await deliver(store, adapter, 120_001);
      expect(sent.map((m) => m.text)).toEqual(["slash answer", UNDELIVERED_NOTICE]);
      // The notice's own outcome is lost too: no notice about the notice, nothing repeated.
      for (let t = 2; t < 6; t++) await deliver(store, adapter, t * 120_000);
      expect(sent.map((m) => m.text)).toEqual(["slash answer", UNDELIVERED_NOTICE]);
      expect(store.outbox.rows("dead").map((row) => row.id)).toEqual(["s1:0", "s1:0:undelivered"]);
    });
  });

  it("re-sends an untraceable reply when the platform promises to drop repeats", async () => {
    await withStore("idempotent", async (store) => {
      const { adapter, sent } = scriptedChannel(
        { "s2:0": ["throw"] },
        { reconcile: [{ outcome: "untraceable", reason: "keyed", idempotent: true }] },
      );
      store.outbox.insert(
        { id: "s2:0", runId: null, route, text: "keyed answer", chunkIndex: 0, chunkCount: 1 },
        0,
      );
      await deliver(store, adapter, 0);
      await deliver(store, adapter, 120_000);
      expect(sent.map((m) => m.id)).toEqual(["s2:0", "s2:0"]);
      expect(store.outbox.rows()[0]!.state).toBe("sent");
    });
  });
  it("records a chunk's first attempt and hands it to every later send and reconcile (not the queued time, not a later attempt)", async () => {
    await withStore("first-attempt", async (store) => {
      const { adapter, sent, reconciled } = scriptedChannel(
        [
          { ok: false, retryable: true, retryAfterMs: 1_000, error: "429" },
          { ok: false, outcomeUnknown: true, error: "reset" },
        ],
        { reconcile: [{ outcome: "missing" }] },
      );
      store.outbox.insert(
        { id: "fa:0", runId: "fa", route, text: "hi", chunkIndex: 0, chunkCount: 1 },
        1_000,
      );
      await deliver(store, adapter, 5_000, 8);
      await deliver(store, adapter, 9_000, 8);
      await deliver(store, adapter, 60_000, 8);
      expect(sent.map((m) => m.firstAttemptAt)).toEqual([5_000, 5_000, 5_000]);
      expect(reconciled.map((m) => [m.queuedAt, m.firstAttemptAt])).toEqual([[1_000, 5_000]]);
      expect(store.outbox.rows()[0]).toMatchObject({ state: "sent", firstAttemptAt: 5_000 });
    });
  });
  it("counts no attempt for a send the channel held back before any request (an empty rate-limit bucket), and waits it out", async () => {
    await withStore("held-back", async (store) => {
      const { adapter, sent } = scriptedChannel([
        { ok: false, retryable: true, retryAfterMs: 500, error: "held back", notSent: true },
      ]);
      store.outbox.insert(
        { id: "hb:0", runId: "hb", route, text: "hi", chunkIndex: 0, chunkCount: 1 },
        1_000,
      );
      store.outbox.insert(
        { id: "hb2:0", runId: "hb2", route, text: "later", chunkIndex: 0, chunkCount: 1 },
        1_000,
      );
      await deliver(store, adapter, 2_000, 1);
      expect(sent.map((m) => m.id)).toEqual(["hb:0"]);
      expect(store.outbox.rows()[0]).toMatchObject({
        state: "pending",
        attempts: 0,
        firstAttemptAt: null,
        nextAt: 2_500,
      });
      await deliver(store, adapter, 2_499, 1);
      expect(sent).toHaveLength(1);
      // maxAttempts 1: had the hold counted, the chunk would be dead now.
      await deliver(store, adapter, 2_500, 1);
      expect(sent.map((m) => m.id)).toEqual(["hb:0", "hb:0", "hb2:0"]);
      expect(store.outbox.rows().map((r) => [r.state, r.attempts, r.firstAttemptAt])).toEqual([
        ["sent", 1, 2_500],
        ["sent", 1, 2_500],
      ]);
    });
  });
});
