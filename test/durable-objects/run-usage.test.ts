import {
  abortAllDurableObjects,
  env,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { withDb } from "../../functions/db/client.ts";
import { sessions, usage } from "../../functions/db/schema.ts";
import type { SessionState } from "../../durable-objects/session/state.ts";
import { status } from "../../durable-objects/session/status.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { pruneSessionStorage } from "../../durable-objects/session/upkeep/retention.ts";
import type { Env } from "../../workers/env.ts";
import { newScenario } from "../agent/model-helpers.ts";
import { modelRequests, scriptModel, sessionStub, waitFor, webchatEvent } from "./helpers.ts";

/**
 * A run's usage and rounds come from its model_calls rows while it runs (run/run-usage.ts) and are
 * written into its row once, with its end: the round bound of a resumed run, /status, the totals
 * mirrored to Postgres and the run's own totals must be what they were when each call rewrote the
 * run's row.
 */

const MAX_TOOL_ITERATIONS = 50; // agents.defaults.maxToolIterations in the suite's config (the default)
const HOUR = 3_600_000;

interface CallSums {
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  models: string[];
}

/** What the run's model_calls rows hold (the durable record of each call). */
async function callSums(key: string, runId: string): Promise<CallSums> {
  return runInDurableObject(sessionStub(key), (_instance, state) => {
    const rows = state.storage.sql
      .exec<{
        kind: string;
        outcome: string;
        i: number;
        o: number;
        r: number;
        w: number;
        m: string;
      }>(
        `SELECT kind, outcome, input_tokens AS i, output_tokens AS o, cache_read_tokens AS r,
           cache_write_tokens AS w, provider || '/' || model AS m FROM model_calls WHERE run_id = ? ORDER BY at`,
        runId,
      )
      .toArray();
    expect(rows.every((row) => row.kind === "turn" && row.outcome === "ok")).toBe(true);
    const sum = (pick: (row: (typeof rows)[number]) => number) =>
      rows.reduce((total, row) => total + pick(row), 0);
    return {
      calls: rows.length,
      input: sum((row) => row.i),
      output: sum((row) => row.o),
      cacheRead: sum((row) => row.r),
      cacheWrite: sum((row) => row.w),
      models: rows.map((row) => row.m),
    };
  });
}

function toolRound(n: number) {
  return {
    type: "tool_calls",
    calls: [{ id: `call_${n}`, name: "no_such_tool", arguments: { n } }],
    usage: { input: 100 + n, output: n, cacheRead: 2, cacheWrite: 1 },
  };
}

describe("a run's usage, summed from its model calls", () => {
  it("a run that crashes after two model calls keeps its round bound, and its totals count each call once", async () => {
    const key = `agent:main:usage-crash-${crypto.randomUUID()}`;
    const scenario = newScenario("usage-crash");
    // Two answered rounds, then the third call hangs and the object dies; the model never stops
    // asking for tools, so only agents.defaults.maxToolIterations ends the run.
    await scriptModel(scenario, [
      toolRound(1),
      toolRound(2),
      { type: "hang" },
      ...Array.from({ length: MAX_TOOL_ITERATIONS + 5 }, (_, i) => toolRound(i + 3)),
    ]);
    const stub = sessionStub(key);
    expect(await stub.accept(webchatEvent(key, `work forever [scenario:${scenario}]`))).toEqual({
      status: "accepted",
    });
    await waitFor(
      async () => (await modelRequests(scenario)).length >= 3,
      15_000,
      "the third model call",
    );
    await abortAllDurableObjects();

    // The alarm brings the session back in a new isolate: the two rounds are read from model_calls.
    await runDurableObjectAlarm(sessionStub(key));
    const run = await waitFor(
      () =>
        runInDurableObject(sessionStub(key), (_instance, state) => {
          const store = new SessionStore(state.storage);
          const runId = store.inbox.byState("settled")[0]?.runId;
          const row = runId ? store.runs.get(runId) : undefined;
          return row?.state === "finished" ? row : undefined;
        }),
      60_000,
      "the resumed run to end",
    );
    // The first call answers and each further one follows a tool round: 1 + 50 answered calls in
    // all, 2 before the crash, 49 after it (a fresh allowance would have made 51 after it).
    const rounds = MAX_TOOL_ITERATIONS + 1;
    expect(await modelRequests(scenario)).toHaveLength(rounds + 1);
    const sums = await callSums(key, run.runId);
    expect(sums.calls).toBe(rounds);
    expect(run).toMatchObject({
      resumes: 1,
      steps: rounds,
      modelRef: sums.models.at(-1),
      inputTokens: sums.input,
      outputTokens: sums.output,
      cacheReadTokens: sums.cacheRead,
      cacheWriteTokens: sums.cacheWrite,
    });
    // Each scripted round's usage exactly once: rounds 1 … 51 ask 100 + n input and n output tokens.
    expect(run.inputTokens).toBe(100 * rounds + (rounds * (rounds + 1)) / 2);
    expect(run.outputTokens).toBe((rounds * (rounds + 1)) / 2);
    expect(run.cacheReadTokens).toBe(2 * rounds);
    const reply = await runInDurableObject(sessionStub(key), (_instance, state) => {
      const store = new SessionStore(state.storage);
      return store.inbox.byState("settled")[0]?.reply;
    });
    expect(reply).toMatch(/Stopped after 50 tool rounds/);
  });

  it("/status counts a run's calls while it runs and after it, and Postgres gets the same totals", async () => {
    const key = `agent:main:usage-status-${crypto.randomUUID()}`;
    const scenario = newScenario("usage-status");
    await scriptModel(scenario, [
      toolRound(1),
      // The second call takes a while: /status is asked while it is in flight.
      { type: "text", text: "all done", delayMs: 2_500, usage: { input: 50, output: 5 } },
    ]);
    const stub = sessionStub(key);
    const answer = stub.chat(webchatEvent(key, `two rounds [scenario:${scenario}]`));
    await waitFor(
      async () => (await modelRequests(scenario)).length >= 2,
      15_000,
      "the second model call",
    );
    const during = await runInDurableObject(stub, (instance, state) => {
      const s = (instance as unknown as { s: SessionState }).s;
      const run = s.store.runs.active()!;
      return {
        status: status(s),
        run,
        // What a new isolate would see: the same usage, summed from the calls' rows.
        restarted: new SessionStore(state.storage).runs.get(run.runId),
        // The run's row itself is not rewritten per call: its totals come with its end.
        row: state.storage.sql
          .exec<{ steps: number; i: number }>(
            `SELECT steps, input_tokens AS i FROM runs WHERE run_id = ?`,
            run.runId,
          )
          .one(),
      };
    });
    expect(during.status).toMatchObject({ inputTokens: 101, outputTokens: 1, runActive: true });
    expect(during.run).toMatchObject({ state: "running", steps: 1, inputTokens: 101 });
    expect(during.restarted).toMatchObject({ steps: 1, inputTokens: 101, outputTokens: 1 });
    expect(during.row).toEqual({ steps: 0, i: 0 });

    await new Response(await answer).text();
    const after = await runInDurableObject(stub, (instance) => {
      const s = (instance as unknown as { s: SessionState }).s;
      return { status: status(s), run: s.store.runs.get(during.run.runId)! };
    });
    expect(after.status).toMatchObject({ inputTokens: 151, outputTokens: 6, runActive: false });
    const sums = await callSums(key, during.run.runId);
    expect(after.run).toMatchObject({
      state: "finished",
      steps: 2,
      inputTokens: sums.input,
      outputTokens: sums.output,
      modelRef: sums.models.at(-1),
    });

    // The mirror copies the finished run's totals and the session's (usage and sessions tables).
    const testEnv = env as unknown as Env;
    const mirrored = await waitFor(
      () =>
        withDb(testEnv, async (db) => {
          const [run] = await db.select().from(usage).where(eq(usage.runId, during.run.runId));
          const [session] = await db.select().from(sessions).where(eq(sessions.sessionKey, key));
          return run && session?.inputTokens === 151 ? { run, session } : undefined;
        }),
      20_000,
      "the mirror",
    );
    expect(mirrored.run).toMatchObject({
      model: sums.models.at(-1),
      inputTokens: 151,
      outputTokens: 6,
      cacheReadTokens: 2,
      cacheWriteTokens: 1,
    });
    expect(mirrored.session).toMatchObject({ inputTokens: 151, outputTokens: 6 });
  });

  it("the sweep keeps an unfinished run's calls, older than 48 h, until the run ends", async () => {
    const key = `agent:main:usage-sweep-${crypto.randomUUID()}`;
    await runInDurableObject(sessionStub(key), (_instance, state) => {
      const store = new SessionStore(state.storage);
      const now = Date.now();
      store.meta.set("sessionId", "s-sweep");
      store.runs.insert({
        runId: "long-run",
        sessionId: "s-sweep",
        state: "running",
        route: { channel: "webchat", accountId: "default", to: "tester" },
        modelRef: null,
        progressState: {},
        options: {},
        startedAt: now - 50 * HOUR,
      });
      for (const [id, at] of [
        ["old-call", now - 49 * HOUR],
        ["new-call", now - HOUR],
      ] as const)
        store.modelCalls.record({
          id,
          runId: "long-run",
          sessionId: "s-sweep",
          kind: "turn",
          provider: "fakeanthropic",
          model: "m",
          channel: "webchat",
          senderId: "tester",
          usage: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
          costUsd: 0,
          outcome: "ok",
          durationMs: 1,
          at,
        });
      // No Postgres: a call may go once it is 48 h old.
      const policy = {
        activeSessionId: "s-sweep",
        archived: false,
        deadLetterMs: 30 * 24 * HOUR,
        maxEntries: 500,
        archiveMs: false as const,
      };
      pruneSessionStorage(state.storage.sql, policy, now);
      // A new isolate (a fresh store) still finds both rounds.
      expect(new SessionStore(state.storage.sql).runs.get("long-run")).toMatchObject({
        steps: 2,
        inputTokens: 20,
      });
      // Its end, in a new isolate too (the store that inserted it never saw these calls).
      new SessionStore(state.storage.sql).runs.finish("long-run", "finished", now, 0);
      pruneSessionStorage(state.storage.sql, policy, now);
      const left = state.storage.sql.exec(`SELECT id FROM model_calls`).toArray();
      expect(left).toEqual([{ id: "new-call" }]);
      // The totals are in the run's row now, and the session's spend kept the swept call.
      expect(store.runs.get("long-run")).toMatchObject({ steps: 2, inputTokens: 20 });
      expect(store.modelCalls.spend("s-sweep")).toMatchObject({ calls: 2, inputTokens: 20 });
    });
  });

  it("a run in flight across the deploy (its row counted its earlier calls) counts each call once", async () => {
    const key = `agent:main:usage-deploy-${crypto.randomUUID()}`;
    await runInDurableObject(sessionStub(key), (_instance, state) => {
      const store = new SessionStore(state.storage);
      const now = Date.now();
      store.runs.insert({
        runId: "old-run",
        sessionId: "s-deploy",
        state: "running",
        route: { channel: "webchat", accountId: "default", to: "tester" },
        modelRef: null,
        progressState: {},
        options: { callKind: "heartbeat" },
        startedAt: now - 60_000,
      });
      const call = (id: string, kind: string, input: number, outcome: "ok" | "error" = "ok") =>
        store.modelCalls.record({
          id,
          runId: "old-run",
          sessionId: "s-deploy",
          kind,
          provider: "fakeanthropic",
          model: "before",
          channel: null,
          senderId: null,
          usage: { inputTokens: input, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
          costUsd: 0,
          outcome,
          durationMs: 1,
          at: now - 50_000 + input,
        });
      call("c1", "heartbeat", 30);
      call("c2", "heartbeat", 40);
      // Not rounds of the run: a failed attempt, a compaction, an image description.
      call("c3", "heartbeat", 0, "error");
      call("c4", "compaction", 500);
      call("c5", "image_description", 700);
      // The previous version wrote the two rounds into the row as they came.
      state.storage.sql.exec(
        `UPDATE runs SET steps = 2, model_ref = 'fakeanthropic/before', input_tokens = 70, output_tokens = 2 WHERE run_id = 'old-run'`,
      );
      // This version's isolate: one more round, then the end.
      const fresh = new SessionStore(state.storage);
      expect(fresh.runs.get("old-run")).toMatchObject({ steps: 2, inputTokens: 70 });
      fresh.runs.addUsage("old-run", "fakeanthropic/after", {
        inputTokens: 50,
        outputTokens: 1,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      });
      fresh.runs.finish("old-run", "finished", now, 0);
      expect(fresh.runs.get("old-run")).toMatchObject({
        steps: 3,
        modelRef: "fakeanthropic/after",
        inputTokens: 120,
        outputTokens: 3,
      });
      expect(fresh.runs.sessionTotals("s-deploy")).toEqual({
        inputTokens: 120,
        outputTokens: 3,
        runs: 1,
      });
    });
  });
});
