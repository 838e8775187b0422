import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
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
import { childrenOf, inboxRows, spawnAndYield } from "./helpers.ts";

/** The assistant replies of a session, as the web chat shows them. */
async function replies(key: string): Promise<string[]> {
  return (await sessionStub(key).history())
    .filter((entry) => entry.role === "assistant")
    .map((entry) => entry.text);
}

describe("sessions_spawn and the announce", () => {
  it("runs the child in its own session and brings its result back as one parent turn", async () => {
    const parent = newScenario("sub-parent");
    const child = newScenario("sub-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent),
      { type: "text", text: "The answer is 42." },
    ]);
    await scriptModel(child, [{ type: "text", text: "I found 42." }]);

    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `ask [scenario:${parent}]`)),
    );
    const done = events.find((event) => event.type === "done");
    // sessions_yield ended the turn without a reply.
    expect(done?.type === "done" ? done.text : undefined).toBe("");
    const [record] = await childrenOf(key);
    expect(record?.childKey).toMatch(/^agent:main:subagent:[0-9a-f-]{36}$/);

    await waitFor(
      async () => (await replies(key)).includes("The answer is 42."),
      20_000,
      "the parent's turn on the child's report",
    );
    const childRequests = await modelRequests(child);
    expect(childRequests).toHaveLength(1);
    // The child runs the minimal prompt with its task as the first message, and no session tools.
    const childBody = JSON.stringify(childRequests[0]!.body);
    expect(childBody).toContain("[Subagent Task]");
    expect(childBody).toContain("Subagent Context");
    const childTools = (childRequests[0]!.body.tools ?? []).map(
      (tool: { name: string }) => tool.name,
    );
    expect(childTools).not.toContain("sessions_spawn");
    expect(childTools).not.toContain("sessions_send");
    expect(childTools).not.toContain("session_status");

    const parentRequests = await modelRequests(parent);
    expect(parentRequests).toHaveLength(2);
    const announce = JSON.stringify(parentRequests[1]!.body);
    expect(announce).toContain("Status: completed; ready for parent review");
    expect(announce).toContain("I found 42.");
    expect((await childrenOf(key))[0]).toMatchObject({ state: "ended", outcome: "ok" });
    expect(await inboxRows(key, "subagent-announce:")).toHaveLength(1);
    // The child's call is metered in the child for the person the parent answered (sender budgets).
    const calls = await runInDurableObject(sessionStub(record!.childKey), async (_i, state) =>
      state.storage.sql
        .exec<{ kind: string; channel: string; sender_id: string }>(
          `SELECT kind, channel, sender_id FROM model_calls`,
        )
        .toArray()
        .map((row) => ({ ...row })),
    );
    expect(calls).toEqual([{ kind: "subagent", channel: "webchat", sender_id: "tester" }]);
  });

  it("announces exactly once through an eviction of the child and of the parent, and a duplicate delivery", async () => {
    const parent = newScenario("sub-evict-parent");
    const child = newScenario("sub-evict-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent),
      // The parent's turn on the report hangs: the parent is evicted in it.
      { type: "hang" },
      { type: "text", text: "Reported once." },
    ]);
    // The child's first model call hangs: the child is evicted while it works.
    await scriptModel(child, [{ type: "hang" }, { type: "text", text: "child result" }]);

    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `go [scenario:${parent}]`)),
    );
    const [record] = await childrenOf(key);
    const childKey = record!.childKey;
    await waitFor(async () => (await modelRequests(child)).length >= 1, 15_000, "the child's call");
    await abortAllDurableObjects();
    await runDurableObjectAlarm(sessionStub(childKey));

    await waitFor(async () => (await modelRequests(parent)).length >= 2, 20_000, "the report turn");
    await abortAllDurableObjects();
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () => (await replies(key)).includes("Reported once."),
      20_000,
      "the resumed report turn",
    );

    const announces = await inboxRows(key, "subagent-announce:");
    expect(announces).toHaveLength(1);
    // The same report delivered again (a retry whose answer was lost) is a duplicate.
    expect(await sessionStub(key).accept(announces[0]!.event)).toEqual({ status: "duplicate" });
    await runDurableObjectAlarm(sessionStub(key));
    expect(await modelRequests(child)).toHaveLength(2);
    expect(await modelRequests(parent)).toHaveLength(3);
    expect((await replies(key)).filter((text) => text === "Reported once.")).toHaveLength(1);
    // The child's queue of reports is empty: it was stored once and dropped.
    const childAnnounces = await inboxRows(childKey, "subagent-task:");
    expect(childAnnounces).toHaveLength(1);
  });

  it("a busy parent takes the report in at its next boundary", async () => {
    const parent = newScenario("sub-busy-parent");
    const child = newScenario("sub-busy-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_spawn_busy",
            name: "sessions_spawn",
            arguments: { task: `work [scenario:${child}]`, note: `[scenario:${parent}]` },
          },
        ],
      },
      // Still busy with its own turn when the child reports.
      { type: "hang" },
      { type: "text", text: "first answer, with the report" },
    ]);
    await scriptModel(child, [{ type: "text", text: "quick result" }]);
    await sessionStub(key).accept(webchatEvent(key, `busy [scenario:${parent}]`));
    await waitFor(
      async () =>
        (await inboxRows(key, "subagent-announce:")).some((row) => row.state === "queued"),
      20_000,
      "the report queued behind the busy run",
    );
    expect(await modelRequests(parent)).toHaveLength(2);
    // The busy model call is cut short (eviction); the resumed run reaches its next boundary.
    await abortAllDurableObjects();
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () => (await replies(key)).includes("first answer, with the report"),
      20_000,
      "the resumed turn",
    );
    // Steered in (the web chat's queue mode is steer): the same turn read the report, no second turn.
    const requests = await modelRequests(parent);
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(requests[2]!.body)).toContain("quick result");
    expect(await replies(key)).toEqual(["first answer, with the report"]);
    expect((await inboxRows(key, "subagent-announce:"))[0]?.state).toBe("settled");
  });
});
