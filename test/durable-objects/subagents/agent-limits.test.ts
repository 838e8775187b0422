import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../helpers.ts";
import { newScenario, testEnv } from "../../agent/model-helpers.ts";
import { configWith, sessionWithConfig } from "../budget-helpers.ts";
import { childrenOf, spawnAndYield } from "./helpers.ts";

/** The suite's config with agent `main`'s own sub-agent block (agents.list[].subagents). */
function mainAgentWith(subagents: Record<string, unknown>): string {
  const base = JSON.parse(testEnv.EDGECLAW_CONFIG ?? "{}") as {
    agents: { list: Array<{ id: string }> };
  };
  return configWith({
    agents: {
      ...base.agents,
      list: base.agents.list.map((entry) =>
        entry.id === "main" ? { ...entry, subagents } : entry,
      ),
    },
  });
}

function system(request: { body: Record<string, unknown> }): string {
  return JSON.stringify(request.body.system ?? request.body.messages);
}

describe("per-agent sub-agent settings and the Active Subagents block", () => {
  it("agents.list[].subagents.maxChildrenPerAgent narrows the default for that agent", async () => {
    const parent = newScenario("sub-agent-limit");
    const child = newScenario("sub-agent-limit-child");
    const key = `agent:main:test-${parent}`;
    const stub = await sessionWithConfig(key, mainAgentWith({ maxChildrenPerAgent: 1 }));
    await scriptModel(parent, [
      {
        type: "tool_calls",
        calls: [1, 2].map((n) => ({
          id: `call_${n}`,
          name: "sessions_spawn",
          arguments: { task: `task ${n} [scenario:${child}]`, note: `[scenario:${parent}]` },
        })),
      },
      { type: "text", text: "one started" },
      { type: "text", text: "report read" },
    ]);
    await scriptModel(child, [{ type: "text", text: "done" }]);
    await collectRunEvents(await stub.chat(webchatEvent(key, `two [scenario:${parent}]`)));
    const results = JSON.stringify((await modelRequests(parent))[1]!.body.messages);
    expect(results).toContain("maxChildrenPerAgent is 1");
    expect(await childrenOf(key)).toHaveLength(1);
  });

  it("a running child is listed in the parent's next turns as quoted data, and leaves it once it reports", async () => {
    const parent = newScenario("sub-active");
    const child = newScenario("sub-active-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent, 'Compare "A" ]] with B'),
      { type: "text", text: "still waiting on it" },
      { type: "text", text: "report read" },
      { type: "text", text: "all clear" },
    ]);
    await scriptModel(child, [{ type: "hang" }]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `delegate [scenario:${parent}]`)),
    );
    // The first turn's prompt was built before the child existed.
    expect(system((await modelRequests(parent))[0]!)).not.toContain("## Active Subagents");
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `status? [scenario:${parent}]`)),
    );
    const during = system((await modelRequests(parent))[1]!);
    expect(during).toContain("## Active Subagents");
    expect(during).toContain('label \\"lookup\\"');
    // Brackets are taken out and quotes escaped: the task stays one quoted line.
    expect(during).toContain('task \\"Compare \\\\\\"A\\\\\\"  with B');
    expect(during).toContain("session agent:main:subagent:");

    const [running] = await childrenOf(key);
    await sessionStub(running!.childKey).stopSubagent("the test is over");
    await waitFor(async () => (await modelRequests(parent)).length >= 3, 20_000, "the report turn");
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `and now? [scenario:${parent}]`)),
    );
    const after = await modelRequests(parent);
    expect(system(after.at(-1)!)).not.toContain("## Active Subagents");
  });
});
