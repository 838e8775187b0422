import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import { StepProfile } from "../../durable-objects/session/upkeep/step-profile.ts";
import { sessionStub, webchatEvent } from "./helpers.ts";

interface Line {
  event: string;
  trigger: string;
  rowsWritten: number;
  doCalls: number;
  steps: Record<string, { rowsWritten: number; statements: number }>;
  tables: Record<string, number>;
  calls: Record<string, { count: number }>;
}

function reported(log: { mock: { calls: unknown[][] } }): Line {
  const line = log.mock.calls
    .map((call) => String(call[0]))
    .find((text) => text.includes('"session_step_profile"'));
  if (!line) throw new Error("no profile line was logged");
  return JSON.parse(line) as Line;
}

describe("the message-cost step profile (EDGECLAW_STEP_PROFILE)", () => {
  it("reports the rows each step wrote as SQLite counts them, per table, and resets after a report", async () => {
    await runInDurableObject(sessionStub("agent:main:step-profile"), async (_instance, state) => {
      const profile = new StepProfile();
      const store = new SessionStore({
        sql: profile.meter(state.storage.sql),
        transactionSync: (work) => state.storage.transactionSync(work),
      });
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        const seq = profile.stepSync("accept", () =>
          store.inbox.insert(webchatEvent("agent:main:step-profile", "hello"), 1),
        );
        await profile.step("triage", async () => {
          store.meta.set("chatType", "direct");
          store.inbox.take(seq!, "run-1");
        });
        profile.report("accept", "agent:main:step-profile");
        const line = reported(log);
        expect(line.trigger).toBe("accept");
        expect(line.steps.accept!.rowsWritten).toBeGreaterThan(0);
        expect(line.steps.triage!.rowsWritten).toBeGreaterThanOrEqual(2);
        expect(line.tables.inbox).toBeGreaterThan(0);
        expect(line.tables["meta:chatType"]).toBeGreaterThan(0);
        expect(line.rowsWritten).toBe(
          line.steps.accept!.rowsWritten + line.steps.triage!.rowsWritten,
        );
        log.mockClear();
        store.inbox.byState("queued");
        profile.report("alarm", undefined);
        expect(reported(log).rowsWritten).toBe(0);
      } finally {
        log.mockRestore();
      }
    });
  });

  it("counts each call made through a Durable Object binding, under the step that made it", async () => {
    await runInDurableObject(sessionStub("agent:main:step-profile-calls"), async () => {
      const profile = new StepProfile();
      const calls: string[] = [];
      const namespace = {
        idFromName: (name: string) => name,
        get: (id: string) => ({ reserve: async () => calls.push(`reserve:${id}`) }),
      };
      const env = profile.meterEnv({ BUDGETS: namespace, NOT_A_NAMESPACE: "text" });
      const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
      try {
        await profile.step("run", async () => {
          const stub = env.BUDGETS.get(env.BUDGETS.idFromName("global"));
          await stub.reserve();
          await stub.reserve();
        });
        profile.report("alarm", undefined);
        const line = reported(log);
        expect(calls).toEqual(["reserve:global", "reserve:global"]);
        expect(line.doCalls).toBe(2);
        expect(line.calls["BUDGETS.reserve"]).toMatchObject({ count: 2, step: "run" });
        expect(env.NOT_A_NAMESPACE).toBe("text");
      } finally {
        log.mockRestore();
      }
    });
  });

  it("meters only Durable Object namespaces: a service binding, whose every property is a remote method, passes through", async () => {
    const profile = new StepProfile();
    const real = env as unknown as Record<string, unknown>;
    const metered = profile.meterEnv(real);
    // AI and BROWSER_WORKER answer idFromName/get like a namespace would; wrapping them once called
    // a remote `bind` on every property read (an unhandled rejection per read).
    expect(metered.AI).toBe(real.AI);
    expect(metered.BROWSER_WORKER).toBe(real.BROWSER_WORKER);
    expect(metered.SESSIONS).not.toBe(real.SESSIONS);
    const sessions = metered.SESSIONS as DurableObjectNamespace;
    const id = sessions.idFromName("agent:main:step-profile-namespace");
    expect(
      id.equals(
        (real.SESSIONS as DurableObjectNamespace).idFromName("agent:main:step-profile-namespace"),
      ),
    ).toBe(true);
  });
});
