import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import { readFile } from "../../functions/agent/workspace.ts";
import { sandboxWindowsFor } from "../../functions/agent/budget-scopes.ts";
import { budgetsSchema } from "../../functions/config/budgets.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";

/**
 * budgets' sandbox time cap, end to end in workerd: the "metered" agent of the test config has
 * `budgets.agents.metered.day.sandboxSeconds: 2` and its commands run in the real bubblewrap
 * sandbox (the companion's host that test/setup/global.ts starts). Once the agent's commands have
 * used 2 s — finished, or still running — a new exec is refused before it reaches the sandbox, and
 * the model is told why and which key raises it.
 */
const AGENT = "metered";

function event(sessionKey: string, text: string): RoutedEvent {
  return { ...webchatEvent(sessionKey, text), agentId: AGENT };
}

async function chat(sessionKey: string, text: string): Promise<RunEvent[]> {
  return collectRunEvents(await sessionStub(sessionKey).chat(event(sessionKey, text)));
}

function sessionKey(name: string): string {
  return `agent:${AGENT}:webchat:${name}-${crypto.randomUUID().slice(0, 8)}`;
}

const budgets = () => env.BUDGETS.get(env.BUDGETS.idFromName(`agent:${AGENT}`));

function today() {
  return sandboxWindowsFor(
    `agent:${AGENT}`,
    budgetsSchema.parse({ agents: { [AGENT]: { day: { sandboxSeconds: 2 } } } }),
    Date.now(),
  );
}

/** A file outside the sandbox that a command appends to: how many times it really ran. */
function counterPath(): string {
  return `/workspace/counter-${crypto.randomUUID().slice(0, 8)}`;
}

describe("budgets: sandbox time cap", () => {
  beforeEach(async () => {
    // This file's agent scope starts every test with its day unused.
    const [window] = today();
    await budgets().reset({ window: window!, now: Date.now() });
  });

  it("refuses a new command once the scope's finished commands used the cap; the refused one never runs", async () => {
    const scenario = newScenario("sandbox-budget");
    const key = sessionKey("finished");
    const counter = counterPath();
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_long",
            name: "exec",
            arguments: { command: `echo ran >> ${counter}; sleep 2.2` },
          },
        ],
      },
      {
        type: "tool_calls",
        calls: [
          { id: "call_over", name: "exec", arguments: { command: `echo ran >> ${counter}` } },
        ],
      },
      { type: "text", text: "Stopped." },
    ]);
    const events = await chat(key, `go [scenario:${scenario}]`);
    expect(events.find((e) => e.type === "done")).toBeTruthy();
    const requests = await modelRequests(scenario);
    const refused = JSON.stringify(requests[2]?.body.messages ?? []);
    expect(refused).toContain("sandbox time cap reached");
    expect(refused).toContain(`agent:${AGENT} has used`);
    expect(refused).toContain(`budgets.agents.${AGENT}.day.sandboxSeconds`);
    // The refused command never reached the sandbox: the counter has the first command's line only.
    expect((await readFile(env, AGENT, counter.slice("/workspace/".length)))?.content).toBe(
      "ran\n",
    );
    const [state] = await budgets().state({ windows: today(), now: Date.now() });
    expect(state!.spentSandboxSeconds).toBeGreaterThanOrEqual(2);
    expect(state!.runningSandboxSeconds).toBe(0);
    // The session's report still lists only the command that ran.
    const report = await sessionStub(key).sandbox();
    expect(report.commands.map((command) => command.id)).toEqual(["call_long"]);
  });

  it("counts running commands too: a background command past the cap blocks the next one", async () => {
    const scenario = newScenario("sandbox-budget-running");
    const key = sessionKey("running");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          { id: "call_bg", name: "exec", arguments: { command: "sleep 4", background: true } },
        ],
      },
      { type: "text", text: "Started." },
      {
        type: "tool_calls",
        calls: [{ id: "call_next", name: "exec", arguments: { command: "true" } }],
      },
      { type: "text", text: "Refused." },
    ]);
    await chat(key, `start [scenario:${scenario}]`);
    await waitFor(async () => {
      const [state] = await budgets().state({ windows: today(), now: Date.now() });
      return state!.runningSandboxSeconds >= 2.2 ? true : undefined;
    }, 10_000);
    await chat(key, `next [scenario:${scenario}]`);
    const refused = JSON.stringify((await modelRequests(scenario))[3]?.body.messages ?? []);
    expect(refused).toContain("sandbox time cap reached");
    // When the background command ends, its real time replaces the running estimate, once.
    await waitFor(async () => {
      const [state] = await budgets().state({ windows: today(), now: Date.now() });
      return state!.runningSandboxSeconds === 0 && state!.spentSandboxSeconds > 0
        ? state
        : undefined;
    }, 20_000);
    const [state] = await budgets().state({ windows: today(), now: Date.now() });
    expect(state!.spentSandboxSeconds).toBeGreaterThanOrEqual(3.5);
    expect(state!.spentSandboxSeconds).toBeLessThan(8);
  });

  it("the default caps every session's day, and sandbox-only caps add no check in front of model calls", () => {
    const defaults = budgetsSchema.parse({});
    expect(defaults.sandboxSecondsPerSessionDay).toBe(14_400);
    expect(sandboxWindowsFor("session:x", defaults, Date.now())).toMatchObject([
      { period: "day", sandboxSeconds: 14_400 },
    ]);
    expect(sandboxWindowsFor("agent:x", defaults, Date.now())).toEqual([]);
    // A sender cap for sandbox time would be ignored, so it is refused with the keys that work.
    const sender = budgetsSchema.safeParse({ sender: { day: { sandboxSeconds: 60 } } });
    expect(sender.success).toBe(false);
    expect(JSON.stringify(sender.error?.issues)).toContain("not per sender");
    const off = budgetsSchema.parse({ sandboxSecondsPerSessionDay: 0 });
    expect(sandboxWindowsFor("session:x", off, Date.now())).toEqual([]);
  });
});
