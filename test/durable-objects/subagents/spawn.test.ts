import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { inboundEnvelopeSchema } from "../../../functions/core/envelope.ts";
import { spawnChild } from "../../../durable-objects/session/subagents/spawn.ts";
import type { SessionState } from "../../../durable-objects/session/state.ts";
import type { RoutedEvent } from "../../../durable-objects/session-api.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../helpers.ts";
import { newScenario } from "../../agent/model-helpers.ts";
import { configWith, sessionWithConfig } from "../budget-helpers.ts";
import { childrenOf, inboxRows, spawnAndYield } from "./helpers.ts";

async function replies(key: string): Promise<string[]> {
  return (await sessionStub(key).history())
    .filter((entry) => entry.role === "assistant")
    .map((entry) => entry.text);
}

/** The tool results the parent's model was sent in its last request. */
function toolResults(body: Record<string, unknown>): string {
  return JSON.stringify(body.messages);
}

describe("sessions_spawn limits, exactly once, budgets", () => {
  it("refuses a spawn past agents.defaults.subagents.maxChildrenPerAgent", async () => {
    const parent = newScenario("sub-limit");
    const child = newScenario("sub-limit-child");
    const key = `agent:main:test-${parent}`;
    const stub = await sessionWithConfig(
      key,
      configWith({
        agents: {
          ...JSON.parse(configWith({})).agents,
          defaults: {
            ...JSON.parse(configWith({})).agents?.defaults,
            subagents: { maxChildrenPerAgent: 1 },
          },
        },
      }),
    );
    await scriptModel(parent, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_one",
            name: "sessions_spawn",
            arguments: { task: `one [scenario:${child}]`, note: `[scenario:${parent}]` },
          },
          {
            id: "call_two",
            name: "sessions_spawn",
            arguments: { task: `two [scenario:${child}]`, note: `[scenario:${parent}]` },
          },
        ],
      },
      { type: "text", text: "one started" },
      { type: "text", text: "report read" },
    ]);
    await scriptModel(child, [{ type: "text", text: "child one done" }]);
    await collectRunEvents(await stub.chat(webchatEvent(key, `two please [scenario:${parent}]`)));
    const second = toolResults((await modelRequests(parent))[1]!.body);
    expect(second).toContain('\\"status\\":\\"accepted\\"');
    expect(second).toContain("maxChildrenPerAgent is 1");
    expect(await childrenOf(key)).toHaveLength(1);
    await waitFor(async () => (await replies(key)).includes("report read"), 20_000, "the report");
    expect(await modelRequests(child)).toHaveLength(1);
  });

  it("a child cannot spawn at the default depth, and a resumed spawn asks for the same child", async () => {
    const parent = newScenario("sub-once");
    const child = newScenario("sub-once-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      { type: "text", text: "hello" },
      { type: "text", text: "got it" },
    ]);
    await scriptModel(child, [{ type: "text", text: "did it once" }]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `hi [scenario:${parent}]`)),
    );
    // The same run and tool call asking twice (a run resumed after an eviction re-runs a tool call
    // whose result was not yet recorded): one child, one task, one run, one report.
    const answers = await runInDurableObject(sessionStub(key), async (instance) => {
      const s = (instance as unknown as { s: SessionState }).s;
      const spawner = {
        runId: "run-resumed",
        route: { channel: "webchat", accountId: "default", to: "tester" },
        senderIsOwner: true,
      };
      const request = { task: `do it [scenario:${child}]` };
      return [
        await spawnChild(s, spawner, request, "call_same"),
        await spawnChild(s, spawner, request, "call_same"),
      ];
    });
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]?.status).toBe("accepted");
    const childKey = answers[0]!.status === "accepted" ? answers[0]!.childSessionKey : "";
    expect(await childrenOf(key)).toHaveLength(1);
    await waitFor(async () => (await replies(key)).includes("got it"), 20_000, "the report");
    expect(await inboxRows(childKey, "subagent-task:")).toHaveLength(1);
    expect(await inboxRows(key, "subagent-announce:")).toHaveLength(1);
    expect(await modelRequests(child)).toHaveLength(1);
    // The child (depth 1, maxSpawnDepth 1) is a leaf: sessions_spawn refuses there.
    const refused = await runInDurableObject(sessionStub(childKey), async (instance) =>
      spawnChild(
        (instance as unknown as { s: SessionState }).s,
        {
          runId: "r",
          route: { channel: "automation", accountId: "default", to: "x" },
          senderIsOwner: true,
        },
        { task: "deeper" },
        "call_deeper",
      ),
    );
    expect(refused).toMatchObject({ status: "refused" });
    expect(refused.status === "refused" ? refused.error : "").toContain("maxSpawnDepth");
  });

  it("a child that fails reports once, with its reason", async () => {
    const parent = newScenario("sub-fail");
    const child = newScenario("sub-fail-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent),
      { type: "text", text: "noted the failure" },
    ]);
    await scriptModel(child, [
      {
        type: "error",
        status: 400,
        errorType: "invalid_request_error",
        message: "bad child request",
      },
    ]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `try [scenario:${parent}]`)),
    );
    await waitFor(
      async () => (await replies(key)).includes("noted the failure"),
      20_000,
      "the report",
    );
    const report = JSON.stringify((await modelRequests(parent))[1]!.body);
    expect(report).toContain("Status: failed");
    expect(report).toContain("bad child request");
    expect(await inboxRows(key, "subagent-announce:")).toHaveLength(1);
    expect((await childrenOf(key))[0]).toMatchObject({ state: "ended", outcome: "error" });
  });

  it("a parent with no channel (an unattended cron turn) still gets the report", async () => {
    const parent = newScenario("sub-cron");
    const child = newScenario("sub-cron-child");
    const key = `agent:main:cron:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent),
      { type: "text", text: "cron digest done" },
    ]);
    await scriptModel(child, [{ type: "text", text: "digest part" }]);
    const event: RoutedEvent = {
      agentId: "main",
      sessionKey: key,
      envelope: inboundEnvelopeSchema.parse({
        dedupKey: `cron:${parent}`,
        channel: "automation",
        chatType: "direct",
        peerId: "cron",
        senderId: "cron",
        text: `make the digest [scenario:${parent}]`,
        receivedAt: Date.now(),
        route: { channel: "automation", accountId: "default", to: "cron" },
      }),
      automation: { source: "cron", action: "agent-turn", jobId: "job", freshSession: true },
    };
    await sessionStub(key).accept(event);
    await waitFor(
      async () => (await replies(key)).includes("cron digest done"),
      20_000,
      "the report",
    );
    expect(JSON.stringify((await modelRequests(parent))[1]!.body)).toContain("digest part");
  });

  it("refuses a spawn a budget would refuse, before the child starts", async () => {
    const parent = newScenario("sub-budget");
    const child = newScenario("sub-budget-child");
    const key = `agent:main:test-${parent}`;
    const sender = `budget-${crypto.randomUUID().slice(0, 8)}`;
    const stub = await sessionWithConfig(
      key,
      configWith({ budgets: { sender: { day: { tokens: 500_000 } } } }),
    );
    await scriptModel(parent, [
      // This call fills the sender's day (600k tokens against a 500k cap).
      { ...spawnAndYield(child, parent), usage: { input: 600_000, output: 10 } },
      { type: "text", text: "never" },
    ]);
    await scriptModel(child, [{ type: "text", text: "must not run" }]);
    await collectRunEvents(
      await stub.chat(
        webchatEvent(key, `spend [scenario:${parent}]`, undefined, { senderId: sender }),
      ),
    );
    expect(await childrenOf(key)).toEqual([]);
    expect(await modelRequests(child)).toHaveLength(0);
    // The tool result says why; the yield had nothing to wait for, and the run's next call was refused too.
    const transcript = await runInDurableObject(stub, async (_instance, state) =>
      state.storage.sql
        .exec<{ message: string }>(`SELECT message FROM transcript ORDER BY seq`)
        .toArray()
        .map((row) => row.message)
        .join("\n"),
    );
    expect(transcript).toContain("has no room left this day");
    expect(transcript).toContain(`sender:webchat:${sender}`);
    expect(JSON.stringify(await sessionStub(key).history())).not.toContain("never");
  });
});

describe("/subagents", () => {
  it("lists, shows, logs and kills this session's children; a killed child reports once", async () => {
    const parent = newScenario("sub-cmd");
    const child = newScenario("sub-cmd-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent, "Slow job"),
      { type: "text", text: "heard it was stopped" },
    ]);
    // The child works on and on: it is killed while its model call hangs.
    await scriptModel(child, [{ type: "hang" }]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `go [scenario:${parent}]`)),
    );
    await waitFor(async () => (await modelRequests(child)).length >= 1, 15_000, "the child's call");
    const command = async (text: string) =>
      JSON.stringify(await collectRunEvents(await sessionStub(key).chat(webchatEvent(key, text))));
    expect(await command("/subagents list")).toContain("#1 lookup — running");
    const info = await command("/subagents info 1");
    expect(info).toContain("Session: agent:main:subagent:");
    expect(info).toContain("Slow job");
    expect(await command("/subagents log 1")).toContain("[Subagent Task]");
    expect(await command("/subagents kill 1")).toContain("its run was aborted");
    await waitFor(
      async () => (await replies(key)).includes("heard it was stopped"),
      20_000,
      "the report",
    );
    expect(JSON.stringify((await modelRequests(parent))[1]!.body)).toContain(
      "Status: stopped before it finished",
    );
    expect(await inboxRows(key, "subagent-announce:")).toHaveLength(1);
    expect(await command("/subagents list")).toContain("ended (aborted)");
  });
});
