import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { inArray } from "drizzle-orm";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { SessionDO } from "../../durable-objects/session.ts";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { withDb } from "../../functions/db/client.ts";
import { sessions } from "../../functions/db/schema.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { collectRunEvents, scriptModel, sessionStub, waitFor, webchatEvent } from "./helpers.ts";

// What test/setup/global.ts provides (that file is typechecked with the Node config, not this one).
declare module "vitest" {
  interface ProvidedContext {
    pgChaosProxy: string;
  }
}

/**
 * These sessions reach Postgres through their own bridge (test/setup/global.ts), which counts the
 * connections it carries and can freeze or kill them without disturbing the rest of the suite.
 */
const chaos = inject("pgChaosProxy");

async function bridge(
  action: "stats" | "freeze" | "kill" | "resume",
): Promise<{ open: number; peak: number; opened: number }> {
  const res = await fetch(`http://${chaos}/_control/${action}`, {
    method: action === "stats" ? "GET" : "POST",
  });
  return res.json();
}

/** Points one SessionDO at the chaos bridge, optionally with its own `database` settings. */
async function useChaosBridge(key: string, overrides: Record<string, unknown> = {}): Promise<void> {
  const config = {
    ...(JSON.parse(env.EDGECLAW_CONFIG ?? "{}") as Record<string, unknown>),
    ...overrides,
  };
  await runInDurableObject(sessionStub(key), (instance: SessionDO) => {
    (instance as unknown as { env: typeof env }).env = {
      ...env,
      EDGECLAW_PG_WS_PROXY: chaos,
      EDGECLAW_CONFIG: JSON.stringify(config),
    };
  });
}

/** A DM from a stranger on its own channel: triage looks the sender up and records a pairing request in Postgres. */
function strangerDm(key: string, tag: string): RoutedEvent {
  const channel = `pgchan${tag}`;
  const envelope = inboundEnvelopeSchema.parse({
    dedupKey: `${channel}:${crypto.randomUUID()}`,
    channel,
    chatType: "direct",
    peerId: "stranger",
    senderId: "stranger",
    text: "hello?",
    receivedAt: Date.now(),
    route: { channel, to: "stranger" },
  });
  return { envelope, agentId: "main", sessionKey: key };
}

function sessionFacts(key: string) {
  return runInDurableObject(sessionStub(key), (_instance, state) => {
    const store = new SessionStore(state.storage.sql);
    const rows = store.inbox.byState("settled");
    const failures = [...rows, ...store.inbox.byState("new")].reduce(
      (sum, row) => sum + row.failures,
      0,
    );
    return {
      settled: rows.length,
      reply: rows[0]?.reply ?? "",
      retryAt: store.meta.get("retryAt"),
      failures,
    };
  });
}

/** Every line the Worker logs as an error or warning, and every unhandled rejection, while a test runs. */
let logged: string[] = [];
let unhandled: unknown[] = [];
const onUnhandled = (event: PromiseRejectionEvent) => unhandled.push(event.reason);

beforeEach(async () => {
  logged = [];
  unhandled = [];
  const keep = (...args: unknown[]) => void logged.push(args.map(String).join(" "));
  vi.spyOn(console, "error").mockImplementation(keep);
  vi.spyOn(console, "warn").mockImplementation(keep);
  addEventListener("unhandledrejection", onUnhandled);
  await bridge("resume");
});

afterEach(async () => {
  removeEventListener("unhandledrejection", onUnhandled);
  vi.restoreAllMocks();
  await bridge("resume");
});

describe("Postgres connections", () => {
  it("answers a burst of sessions larger than the connection bound, one connection per pass, never above the bound", async () => {
    const bound = configFromEnv(env).database.maxConnections;
    const tag = crypto.randomUUID().slice(0, 8);
    const chats = Array.from({ length: bound * 2 }, (_, i) => `agent:main:pgburst:${tag}:chat${i}`);
    const strangers = Array.from(
      { length: bound * 2 },
      (_, i) => `agent:main:pgburst:${tag}:dm${i}`,
    );
    for (const key of [...chats, ...strangers]) await useChaosBridge(key);
    await Promise.all(
      chats.map((_, i) =>
        scriptModel(`pgburst-${tag}-${i}`, [{ type: "text", text: `answer ${i}` }]),
      ),
    );

    const answers = chats.map((key, i) =>
      sessionStub(key)
        .chat(webchatEvent(key, `question ${i} [scenario:pgburst-${tag}-${i}]`))
        .then(collectRunEvents),
    );
    await Promise.all(
      strangers.map((key, i) => sessionStub(key).accept(strangerDm(key, `${tag}x${i}`))),
    );

    const events = await Promise.all(answers);
    for (const [i, runEvents] of events.entries())
      expect(runEvents.at(-1)).toMatchObject({ type: "done", text: `answer ${i}` });
    for (const key of strangers) {
      const facts = await waitFor(
        async () => {
          const current = await sessionFacts(key);
          return current.settled === 1 ? current : undefined;
        },
        20_000,
        `the pairing reply of ${key}`,
      );
      // Answered on the first try: no connection error sent anyone into backoff.
      expect(facts.reply).toMatch(/Pairing code: [A-HJ-NP-Z2-9]{8}/);
      expect(facts.failures).toBe(0);
    }
    // The chats' passes end by mirroring to Postgres.
    await waitFor(
      async () => {
        const rows = await withDb(env, (db) =>
          db
            .select({ key: sessions.sessionKey })
            .from(sessions)
            .where(inArray(sessions.sessionKey, chats)),
        );
        return rows.length === chats.length;
      },
      20_000,
      "every chat mirrored",
    );

    const stats = await bridge("stats");
    expect(stats.peak).toBeLessThanOrEqual(bound);
    // A chat's pass reads the workspace, runs, and mirrors: one connection, not one per query.
    expect(stats.opened).toBeLessThanOrEqual(chats.length + strangers.length);
    for (const key of chats) expect((await sessionFacts(key)).failures).toBe(0);
    expect(logged).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  for (const outage of ["freeze", "kill"] as const) {
    it(`a ${outage === "freeze" ? "frozen" : "killed"} Postgres costs a few log lines, fails nothing and is caught up after`, async () => {
      const tag = crypto.randomUUID().slice(0, 8);
      const keys = Array.from({ length: 12 }, (_, i) => `agent:main:pg${outage}:${tag}:${i}`);
      // Short timeouts, so a frozen server is noticed within the test's time.
      const overrides = {
        database: { connectTimeoutMs: 1_500, queryTimeoutMs: 2_000, outageBackoffMaxMs: 2_000 },
      };
      for (const key of keys) await useChaosBridge(key, overrides);
      await bridge(outage);
      await Promise.all(
        keys.map((key, i) => sessionStub(key).accept(strangerDm(key, `${tag}o${i}`))),
      );

      // Every session notices and parks its event with a retry time; nothing is settled or lost.
      for (const key of keys) {
        await waitFor(
          async () => (await sessionFacts(key)).retryAt,
          15_000,
          `the outage noticed by ${key}`,
        );
      }
      // Let the sessions retry against the dead server for a while.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      for (const key of keys) expect((await sessionFacts(key)).settled).toBe(0);

      await bridge("resume");
      for (const key of keys) {
        const facts = await waitFor(
          async () => {
            const current = await sessionFacts(key);
            return current.settled === 1 ? current : undefined;
          },
          20_000,
          `${key} caught up`,
        );
        expect(facts.reply).toMatch(/Pairing code: [A-HJ-NP-Z2-9]{8}/);
      }
      // One line when the outage began, however many sessions waited and retried.
      expect(logged.length).toBeGreaterThanOrEqual(1);
      expect(logged.length).toBeLessThanOrEqual(2);
      expect(logged[0]).toMatch(/unreachable/);
      expect(unhandled).toEqual([]);
    });
  }
});
