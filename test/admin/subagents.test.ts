import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { scriptModel, sessionStub, waitFor, webchatEvent } from "../durable-objects/helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";

/**
 * The control page's view of a session's children: GET /admin/sessions/:key/subagents lists what
 * the parent's SessionDO keeps (a finished child with its outcome, run time and tokens; a running
 * one with its run time so far), and each child's cost from its metered model calls in Postgres.
 */
const BASE = "https://edgeclaw.test/admin";
const auth = { authorization: "Bearer test-gateway-token" };

interface Row {
  childSessionKey: string;
  label?: string;
  taskName?: string;
  state: string;
  outcome?: string;
  runtimeMs?: number;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
}

async function subagents(key: string): Promise<{ status: number; rows: Row[] }> {
  const response = await SELF.fetch(`${BASE}/sessions/${encodeURIComponent(key)}/subagents`, {
    headers: auth,
  });
  const body = (await response.json()) as { subagents?: Row[] };
  return { status: response.status, rows: body.subagents ?? [] };
}

describe("admin: a session's sub-agents", { timeout: 60_000 }, () => {
  it("lists finished and running children with status, label, run time, tokens and cost", async () => {
    const parent = newScenario("admin-sub");
    const done = newScenario("admin-sub-done");
    const busy = newScenario("admin-sub-busy");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_done",
            name: "sessions_spawn",
            arguments: {
              task: `Look it up [scenario:${done}]`,
              label: "lookup",
              note: `[scenario:${parent}]`,
            },
          },
          {
            id: "call_busy",
            name: "sessions_spawn",
            arguments: {
              task: `Think long [scenario:${busy}]`,
              taskName: "thinker",
              note: `[scenario:${parent}]`,
            },
          },
          { id: "call_yield", name: "sessions_yield", arguments: {} },
        ],
      },
      { type: "text", text: "one report read" },
    ]);
    await scriptModel(done, [
      { type: "text", text: "found it", usage: { input: 1000, output: 200 } },
    ]);
    await scriptModel(busy, [{ type: "hang" }]);
    await sessionStub(key).accept(webchatEvent(key, `delegate [scenario:${parent}]`));

    const rows = await waitFor(
      async () => {
        const { rows } = await subagents(key);
        const finished = rows.find((row) => row.label === "lookup");
        return finished?.state === "ended" && (finished.costUsd ?? 0) > 0 ? rows : undefined;
      },
      30_000,
      "the finished child with its mirrored cost",
    );
    expect(rows).toHaveLength(2);
    const finished = rows.find((row) => row.label === "lookup")!;
    expect(finished).toMatchObject({ outcome: "ok", inputTokens: 1000, outputTokens: 200 });
    expect(finished.childSessionKey).toMatch(/^agent:main:subagent:/);
    expect(finished.runtimeMs).toBeGreaterThanOrEqual(0);
    // fakeanthropic/claude-test: 3 USD per million in, 15 out.
    expect(finished.costUsd).toBeCloseTo((1000 * 3 + 200 * 15) / 1_000_000, 9);
    const running = rows.find((row) => row.taskName === "thinker")!;
    expect(running.state).toBe("running");
    expect(running.runtimeMs).toBeGreaterThanOrEqual(0);
    expect(running.costUsd).toBe(0);
    // Stopped, it reports once and shows as ended, aborted (the page says "stopped").
    await sessionStub(running.childSessionKey).stopSubagent("the test is over");
    await waitFor(
      async () =>
        (await subagents(key)).rows.find((row) => row.taskName === "thinker")?.outcome ===
          "aborted" || undefined,
      30_000,
      "the stopped child",
    );
  });

  it("answers an empty list for a session with no children, and needs the gateway token", async () => {
    expect(await subagents(`agent:main:test-${newScenario("admin-sub-none")}`)).toEqual({
      status: 200,
      rows: [],
    });
    const response = await SELF.fetch(`${BASE}/sessions/agent%3Amain%3Ax/subagents`);
    expect(response.status).toBe(401);
  });
});
