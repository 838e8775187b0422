import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { modelRequests, scriptModel, sessionStub, waitFor, webchatEvent } from "./helpers.ts";

const TIMEOUT_MS = 172_800 * 1000; // agents.defaults.timeoutSeconds in the suite's config (the default)

/** Leaves a run "running" in storage as a pass that died would: started at `startedAt`, nothing in memory. */
async function seedInterruptedRun(
  key: string,
  scenario: string,
  startedAt: number,
): Promise<{ runId: string; seq: number }> {
  return runInDurableObject(sessionStub(key), async (_instance, state) => {
    const store = new SessionStore(state.storage);
    const now = Date.now();
    const runId = crypto.randomUUID();
    store.meta.set("sessionKey", key);
    store.meta.set("agentId", "main");
    store.meta.set("sessionId", "s-bounds");
    store.meta.set("sessionStartedAt", String(startedAt));
    const text = `a long job [scenario:${scenario}]`;
    const seq = store.inbox.insert(webchatEvent(key, text), startedAt)!;
    store.runs.insert({
      runId,
      sessionId: "s-bounds",
      state: "running",
      route: { channel: "webchat", accountId: "default", to: "tester" },
      modelRef: null,
      progressState: {},
      options: { senderIsOwner: true, triggerSeqs: [seq] },
      startedAt,
    });
    store.inbox.take(seq, runId);
    store.transcript.append("s-bounds", runId, { role: "user", content: text }, startedAt);
    await state.storage.setAlarm(now + 60_000);
    return { runId, seq };
  });
}

async function runAndEvent(key: string, runId: string, seq: number) {
  return runInDurableObject(sessionStub(key), (_instance, state) => {
    const store = new SessionStore(state.storage);
    return { run: store.runs.get(runId)!, event: store.inbox.bySeq(seq)! };
  });
}

describe("runs are bounded by config, not by the alarm", () => {
  it("a resumed run past timeoutSeconds since its first start ends without calling the model", async () => {
    const key = `agent:main:bounds-expired-${crypto.randomUUID()}`;
    const scenario = `bounds-expired-${crypto.randomUUID().slice(0, 8)}`;
    const { runId, seq } = await seedInterruptedRun(key, scenario, Date.now() - TIMEOUT_MS - 1_000);
    await runDurableObjectAlarm(sessionStub(key));
    const { run, event } = await runAndEvent(key, runId, seq);
    expect(run.state).toBe("failed");
    expect(event).toMatchObject({ state: "settled" });
    expect(event.reply).toMatch(/timed out after 172800s/);
    expect(await modelRequests(scenario)).toHaveLength(0);
  });

  it("the timeout counts from the original start across a resume, not from the resume", async () => {
    const key = `agent:main:bounds-remaining-${crypto.randomUUID()}`;
    const scenario = `bounds-remaining-${crypto.randomUUID().slice(0, 8)}`;
    // 1.5 s left of the 48 h; the model would take 8 s.
    await scriptModel(scenario, [{ type: "text", text: "too late", delayMs: 8_000 }]);
    const { runId, seq } = await seedInterruptedRun(key, scenario, Date.now() - TIMEOUT_MS + 1_500);
    const started = Date.now();
    void runDurableObjectAlarm(sessionStub(key));
    const event = await waitFor(
      async () => {
        const facts = await runAndEvent(key, runId, seq);
        return facts.event.state === "settled" ? facts : undefined;
      },
      7_000,
      "the run to time out",
    );
    expect(Date.now() - started).toBeLessThan(7_000);
    expect(event.run.state).toBe("failed");
    expect(event.event.reply).toMatch(/timed out/);
  });

  it("a run whose pass always dies is resumed maxRunResumes times, then ended: the model is billed a bounded number of times", async () => {
    const key = `agent:main:bounds-crash-${crypto.randomUUID()}`;
    const scenario = `bounds-crash-${crypto.randomUUID().slice(0, 8)}`;
    // Every model call hangs, and the object is reset (evicted) while it waits: the step never completes.
    await scriptModel(
      scenario,
      Array.from({ length: 10 }, () => ({ type: "hang" })),
    );
    const { runId, seq } = await seedInterruptedRun(key, scenario, Date.now());
    // The seeded run counts as the first pass that died; each alarm resumes it, and we evict again.
    for (let pass = 1; pass <= 3; pass++) {
      void runDurableObjectAlarm(sessionStub(key)).catch(() => undefined);
      await waitFor(
        async () => (await modelRequests(scenario)).length >= pass,
        10_000,
        `model call ${pass}`,
      );
      // A reset object's stub is broken for good: every call below takes a fresh one.
      await runInDurableObject(sessionStub(key), (_instance, state) =>
        state.abort("simulated eviction"),
      ).catch(() => undefined);
      // The platform retries an alarm whose handler died; here the next pass is started by hand.
      await runInDurableObject(sessionStub(key), (_instance, state) =>
        state.storage.setAlarm(Date.now() + 60_000),
      );
    }
    // The fourth restart is over the bound (agents.defaults.maxRunResumes = 3): no model call, one notice.
    await runDurableObjectAlarm(sessionStub(key));
    const { run, event } = await runAndEvent(key, runId, seq);
    expect(run).toMatchObject({ state: "failed", resumes: 4 });
    expect(event.deadReason).toMatch(/interrupted 4 times/);
    expect(event.reply).toMatch(/had to stop/);
    expect(await modelRequests(scenario)).toHaveLength(3);
    // Nothing wakes it again.
    await runDurableObjectAlarm(sessionStub(key));
    expect(await modelRequests(scenario)).toHaveLength(3);
  });

  it("a run that uses up its slice of the alarm pass checkpoints and continues in the next pass", async () => {
    const key = `agent:main:bounds-slice-${crypto.randomUUID()}`;
    const scenario = `bounds-slice-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(scenario, [
      { type: "tool_calls", calls: [{ name: "no_such_tool", arguments: {} }], delayMs: 1_000 },
      { type: "text", text: "done in the next pass" },
    ]);
    const stub = sessionStub(key);
    const answer = stub.chat(webchatEvent(key, `work [scenario:${scenario}]`));
    await waitFor(
      async () => (await modelRequests(scenario)).length >= 1,
      10_000,
      "the first model call",
    );
    // As if this pass had started runSliceSeconds ago: the run must stop at its next checkpoint.
    await runInDurableObject(stub, (instance) => {
      (instance as unknown as { s: { passStartedAt: number } }).s.passStartedAt = 1;
    });
    const events = await new Response(await answer).text();
    expect(events).toContain("done in the next pass");
    const facts = await runInDurableObject(stub, (instance, state) => {
      const store = new SessionStore(state.storage);
      const run =
        store.runs.active() ??
        store.inbox.byState("settled").map((row) => store.runs.get(row.runId ?? ""))[0];
      return {
        passStartedAt: (instance as unknown as { s: { passStartedAt: number } }).s.passStartedAt,
        run,
      };
    });
    // A later pass (which sets its own start) finished it, and a planned split is not a restart.
    expect(facts.passStartedAt).toBeGreaterThan(1);
    expect(facts.run).toMatchObject({ state: "finished", resumes: 0, steps: 2 });
  });
});
