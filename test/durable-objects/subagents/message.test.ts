import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { withDb } from "../../../functions/db/client.ts";
import { sendMessageTo } from "../../../durable-objects/session/subagents/message.ts";
import type { SessionState } from "../../../durable-objects/session/state.ts";
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
import { slackMessages } from "../../channels/slack/helpers.ts";
import { newScenario, testEnv } from "../../agent/model-helpers.ts";
import { configWith, sessionWithConfig } from "../budget-helpers.ts";

/** A Slack DM conversation of the agent that has been answered once (so it has a route). */
async function slackConversation(): Promise<{ key: string; channel: string }> {
  const sender = `U${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  const channel = `D${sender.slice(1)}`;
  const key = `agent:main:test-msg-${sender}`;
  await approveOpsSenders(sender);
  await sessionStub(key).accept(opsDmEvent(key, sender, channel, "hello bot"));
  await waitFor(async () => (await slackMessages(channel)).length >= 1, 20_000, "the first reply");
  await waitFor(
    async () =>
      withDb(testEnv, async (db) => {
        const rows = await db.execute(sql`SELECT 1 FROM sessions WHERE session_key = ${key}`);
        return rows.rows.length > 0;
      }),
    20_000,
    "the conversation in the sessions index",
  );
  return { key, channel };
}

const texts = async (channel: string) => (await slackMessages(channel)).map((m) => m.text);

describe("the message tool", () => {
  it("posts into another conversation through its outbox, once, through a crash", async () => {
    const target = await slackConversation();
    const scenario = newScenario("msg-owner");
    const key = `agent:main:test-${scenario}`;
    const config = configWith({ tools: { sessions: { visibility: "agent" } } });
    const stub = await sessionWithConfig(key, config);
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_msg",
            name: "message",
            arguments: { sessionKey: target.key, message: "Reminder: standup at 10." },
          },
        ],
      },
      // The owner's run is evicted right after the send.
      { type: "hang" },
      { type: "text", text: "Sent the reminder." },
    ]);
    await stub.accept(webchatEvent(key, `remind them [scenario:${scenario}]`));
    await waitFor(async () => (await modelRequests(scenario)).length >= 2, 20_000, "the send");
    await abortAllDurableObjects();
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () =>
        (await sessionStub(key).history()).some((entry) => entry.text === "Sent the reminder."),
      20_000,
      "the resumed run",
    );
    await waitFor(
      async () => (await texts(target.channel)).includes("Reminder: standup at 10."),
      20_000,
      "the message in the target chat",
    );

    // A run resumed before its tool result was recorded asks again with the same call: nothing new
    // is queued, even with the target evicted in between.
    const again = async () =>
      runInDurableObject(await sessionWithConfig(key, config), async (instance) =>
        sendMessageTo(
          (instance as unknown as { s: SessionState }).s,
          {
            runId: "run-resumed",
            route: { channel: "webchat", accountId: "default", to: "tester" },
            senderIsOwner: true,
          },
          target.key,
          "Second note.",
          "call_again",
        ),
      );
    expect(await again()).toContain('"status":"queued"');
    await abortAllDurableObjects();
    expect(await again()).toContain('"status":"queued"');
    await runDurableObjectAlarm(sessionStub(target.key));
    await waitFor(
      async () => (await texts(target.channel)).includes("Second note."),
      20_000,
      "the second note",
    );
    await runDurableObjectAlarm(sessionStub(target.key));
    const sent = await texts(target.channel);
    expect(sent.filter((text) => text === "Reminder: standup at 10.")).toHaveLength(1);
    expect(sent.filter((text) => text === "Second note.")).toHaveLength(1);
  });

  it("is refused for a target the caller cannot see", async () => {
    const target = await slackConversation();
    const scenario = newScenario("msg-tree");
    const key = `agent:main:test-${scenario}`;
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          { id: "call_m", name: "message", arguments: { sessionKey: target.key, message: "hi" } },
        ],
      },
      { type: "text", text: `ok [scenario:${scenario}]` },
    ]);
    // The default visibility (tree) does not reach another conversation.
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `send [scenario:${scenario}]`)),
    );
    expect(JSON.stringify((await modelRequests(scenario))[1]!.body)).toContain(
      "is not visible from here",
    );
    expect(await texts(target.channel)).not.toContain("hi");
  });
});
