import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../helpers.ts";
import { newScenario } from "../../agent/model-helpers.ts";
import { spawnAndYield } from "./helpers.ts";

/** What the child's model was asked first (its task turn). */
async function childTask(scenario: string): Promise<string> {
  await waitFor(async () => (await modelRequests(scenario)).length >= 1, 20_000, "the child's run");
  return JSON.stringify((await modelRequests(scenario))[0]!.body.messages);
}

describe('sessions_spawn context: "fork"', () => {
  it("hands the child the parent's conversation as fenced data; an isolated child gets none", async () => {
    const parent = newScenario("sub-fork");
    const forked = newScenario("sub-fork-child");
    const isolated = newScenario("sub-fork-iso");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      { type: "text", text: "Noted: the budget is 4,000 EUR." },
      spawnAndYield(forked, parent, "Plan the trip", { context: "fork" }),
      { type: "text", text: "forked report read" },
      spawnAndYield(isolated, parent, "Plan it alone"),
      { type: "text", text: "isolated report read" },
    ]);
    await scriptModel(forked, [{ type: "text", text: "plan made" }]);
    await scriptModel(isolated, [{ type: "text", text: "plan made alone" }]);
    const stub = sessionStub(key);
    await collectRunEvents(
      await stub.chat(webchatEvent(key, `Our budget is 4,000 EUR. [scenario:${parent}]`)),
    );
    await collectRunEvents(await stub.chat(webchatEvent(key, `Delegate it [scenario:${parent}]`)));
    const task = await childTask(forked);
    expect(task).toContain("[Parent conversation (context: fork)]");
    expect(task).toContain("EXTERNAL_UNTRUSTED_CONTENT");
    expect(task).toContain("Our budget is 4,000 EUR.");
    expect(task).toContain("Assistant: Noted: the budget is 4,000 EUR.");
    expect(task).toContain("[Subagent Task]");
    // The conversation comes before the task, and no tool call of the parent is copied.
    expect(task.indexOf("Parent conversation")).toBeLessThan(task.indexOf("[Subagent Task]"));
    expect(task).not.toContain("sessions_spawn");

    await waitFor(
      async () =>
        (await stub.history()).some((entry) => entry.text === "forked report read") || undefined,
      20_000,
      "the forked report",
    );
    await collectRunEvents(await stub.chat(webchatEvent(key, `Again [scenario:${parent}]`)));
    const alone = await childTask(isolated);
    expect(alone).not.toContain("Parent conversation");
    expect(alone).not.toContain("4,000 EUR");
  });
});
