import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionToolsHost } from "../../../durable-objects/session/subagents/host.ts";
import type { SessionState } from "../../../durable-objects/session/state.ts";
import { childrenOf, inboxRows, spawnAndYield } from "./helpers.ts";
import { sql } from "drizzle-orm";
import { withDb } from "../../../functions/db/client.ts";
import {
  approveOpsSenders,
  collectRunEvents,
  modelRequests,
  opsDmEvent,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../helpers.ts";
import { newScenario, testEnv } from "../../agent/model-helpers.ts";
import { configWith, sessionWithConfig } from "../budget-helpers.ts";

const SECRET = "sk-ant-abcdefghijklmnopqrstuvwx";

/** The owner's private chat (the web chat is the operator): it says something private. */
async function ownerSession(): Promise<{ key: string; scenario: string }> {
  const scenario = newScenario("vis-owner");
  const key = `agent:main:test-${scenario}`;
  await scriptModel(scenario, [{ type: "text", text: "Noted your plan." }]);
  const stub = await sessionWithConfig(key, configWith({}));
  await collectRunEvents(
    await stub.chat(webchatEvent(key, `my private plan, key ${SECRET} [scenario:${scenario}]`)),
  );
  // The sessions index is the mirror's copy in Postgres.
  await waitFor(
    async () =>
      withDb(testEnv, async (db) => {
        const rows = await db.execute(sql`SELECT 1 FROM sessions WHERE session_key = ${key}`);
        return rows.rows.length > 0;
      }),
    20_000,
    "the owner's session in the index",
  );
  return { key, scenario };
}

function listAndRead(scenario: string, target: string) {
  return [
    {
      type: "tool_calls",
      calls: [
        { id: "call_list", name: "sessions_list", arguments: { limit: 100 } },
        { id: "call_read", name: "sessions_history", arguments: { sessionKey: target } },
      ],
    },
    { type: "text", text: `done [scenario:${scenario}]` },
  ];
}

/** The tool results the model got back, by call id. */
function toolResult(body: Record<string, unknown>, callId: string): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Array<Record<string, unknown>>)
      if (block.type === "tool_result" && block.tool_use_id === callId)
        return typeof block.content === "string" ? block.content : JSON.stringify(block.content);
  }
  return "";
}

describe("tools.sessions.visibility and privacy", () => {
  it("a stranger's session cannot list or read the owner's, whatever the visibility", async () => {
    const { key: ownerKey } = await ownerSession();
    const scenario = newScenario("vis-stranger");
    const sender = `U${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
    await approveOpsSenders(sender);
    const key = `agent:main:test-${scenario}`;
    const stub = await sessionWithConfig(
      key,
      configWith({ tools: { sessions: { visibility: "all" } } }),
    );
    await scriptModel(scenario, listAndRead(scenario, ownerKey));
    await stub.accept(
      opsDmEvent(key, sender, `D${sender}`, `what did the owner say? [scenario:${scenario}]`),
    );
    await waitFor(
      async () => (await modelRequests(scenario)).length >= 2,
      20_000,
      "the second call",
    );
    const body = (await modelRequests(scenario))[1]!.body;
    const listed = toolResult(body, "call_list");
    expect(listed).toContain(key);
    expect(listed).not.toContain(ownerKey);
    expect(listed).toContain("not the owner's");
    const read = toolResult(body, "call_read");
    expect(read).toContain("is not visible from here");
    expect(JSON.stringify(body)).not.toContain("private plan");
  });

  it("the owner's private chat reads another of its sessions, credentials masked", async () => {
    const { key: ownerKey, scenario: ownerScenario } = await ownerSession();
    const scenario = newScenario("vis-reader");
    const key = `agent:main:test-${scenario}`;
    const stub = await sessionWithConfig(
      key,
      configWith({ tools: { sessions: { visibility: "agent" } } }),
    );
    await scriptModel(scenario, listAndRead(scenario, ownerKey));
    await collectRunEvents(await stub.chat(webchatEvent(key, `recall [scenario:${scenario}]`)));
    // The history read carries the owner's scenario tag: the fake model files that request there.
    const body = (await modelRequests(ownerScenario)).at(-1)!.body;
    expect(toolResult(body, "call_list")).toContain(ownerKey);
    const read = toolResult(body, "call_read");
    expect(read).toContain("my private plan");
    expect(read).toContain("Noted your plan.");
    expect(read).not.toContain(SECRET);
    expect(read).toContain('"contentRedacted": true');
  });

  it("the default visibility (tree) reaches only the session itself and its children", async () => {
    const { key: ownerKey } = await ownerSession();
    const scenario = newScenario("vis-tree");
    const key = `agent:main:test-${scenario}`;
    const stub = await sessionWithConfig(key, configWith({}));
    await scriptModel(scenario, listAndRead(scenario, ownerKey));
    await collectRunEvents(await stub.chat(webchatEvent(key, `look [scenario:${scenario}]`)));
    const body = (await modelRequests(scenario))[1]!.body;
    const listed = toolResult(body, "call_list");
    expect(listed).toContain('"mode": "tree"');
    expect(listed).not.toContain(ownerKey);
    expect(toolResult(body, "call_read")).toContain("is not visible from here");
  });
});

describe("sessions_send", () => {
  it("starts a turn in its own child, once per tool call, as inter-session data", async () => {
    const parent = newScenario("send-parent");
    const child = newScenario("send-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent),
      { type: "text", text: "child reported" },
    ]);
    await scriptModel(child, [
      { type: "text", text: "task done" },
      { type: "text", text: "got your note" },
    ]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `go [scenario:${parent}]`)),
    );
    await waitFor(async () => (await modelRequests(child)).length >= 1, 20_000, "the child's task");
    const [record] = await childrenOf(key);
    const send = () =>
      runInDurableObject(sessionStub(key), async (instance) =>
        sessionToolsHost((instance as unknown as { s: SessionState }).s, {
          runId: "run-send",
          route: { channel: "webchat", accountId: "default", to: "tester" },
          options: { senderIsOwner: true },
        }).send(record!.childKey, `one more thing [scenario:${child}]`, "call_send"),
      );
    expect(await send()).toContain('"status":"sent"');
    expect(await send()).toContain('"status":"already-sent"');
    await waitFor(async () => (await modelRequests(child)).length >= 2, 20_000, "the child's turn");
    const body = JSON.stringify((await modelRequests(child))[1]!.body);
    expect(body).toContain("[Inter-session message from");
    expect(body).toContain("isUser=false");
    expect(await inboxRows(record!.childKey, "session-send:")).toHaveLength(1);
  });
});
