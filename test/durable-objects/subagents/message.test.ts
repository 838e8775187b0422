import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { withDb } from "../../../functions/db/client.ts";
import {
  postMessageHere,
  sendMessageTo,
} from "../../../durable-objects/session/subagents/message.ts";
import { writeFile } from "../../../functions/agent/workspace.ts";
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
import { settle } from "../../channels/wait.ts";
import { newScenario, testEnv } from "../../agent/model-helpers.ts";
import { configWith, sessionWithConfig } from "../budget-helpers.ts";

/**
 * A Slack DM conversation of the agent that has been answered once (so it has a route); `owner`:
 * its sender is the owner (commands.ownerAllowFrom in that session's config).
 */
async function slackConversation(
  owner = false,
): Promise<{ key: string; channel: string; sender: string }> {
  const sender = `U${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  const channel = `D${sender.slice(1)}`;
  const key = `agent:main:test-msg-${sender}`;
  await approveOpsSenders(sender);
  const stub = owner
    ? await sessionWithConfig(
        key,
        configWith({ commands: { ownerAllowFrom: [`slack:${sender}`] } }),
      )
    : sessionStub(key);
  await stub.accept(opsDmEvent(key, sender, channel, "hello bot"));
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
  return { key, channel, sender };
}

const texts = async (channel: string) => (await slackMessages(channel)).map((m) => m.text);

describe("the message tool", () => {
  it("posts into another conversation through its outbox, once, through a crash", async () => {
    const target = await slackConversation();
    const scenario = newScenario("msg-owner");
    const key = `agent:main:test-${scenario}`;
    const config = configWith({
      tools: { sessions: { visibility: "agent" }, message: { targets: "visible" } },
    });
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
          { sessionKey: target.key, text: "Second note.", files: [] },
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
    const config = configWith({ tools: { message: { targets: "visible" } } });
    await collectRunEvents(
      await (await sessionWithConfig(key, config)).chat(
        webchatEvent(key, `send [scenario:${scenario}]`),
      ),
    );
    expect(JSON.stringify((await modelRequests(scenario))[1]!.body)).toContain(
      "is not visible from here",
    );
    expect(await texts(target.channel)).not.toContain("hi");
  });

  it("sends text and a workspace file to the owner's chat by channel + target, once through crashes", async () => {
    const target = await slackConversation(true);
    const scenario = newScenario("msg-file");
    const key = `agent:main:test-${scenario}`;
    const path = `reports/${scenario}.md`;
    await writeFile(testEnv, "main", path, "# Weekly\n\nAll green.\n");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_file",
            name: "message",
            arguments: {
              action: "send",
              channel: "slack",
              target: `user:${target.sender}`,
              message: "The weekly report.",
              media: path,
            },
          },
        ],
      },
      { type: "hang" },
      { type: "text", text: "Sent it." },
    ]);
    // The default tools.message.targets ("owner") reaches the owner's DM without any visibility.
    await sessionStub(key).accept(webchatEvent(key, `send the report [scenario:${scenario}]`));
    await waitFor(async () => (await modelRequests(scenario)).length >= 2, 20_000, "the send");
    expect(JSON.stringify((await modelRequests(scenario))[1]!.body)).toContain('\\"queued\\"');
    await abortAllDurableObjects();
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () => (await sessionStub(key).history()).some((entry) => entry.text === "Sent it."),
      20_000,
      "the resumed run",
    );
    const shared = async () =>
      (await slackMessages(target.channel)).filter((m) => (m as { files?: unknown[] }).files);
    await waitFor(async () => (await shared()).length >= 1, 20_000, "the file in the owner's DM");

    // A crash of the target between recording the send and sending it: the rows are stored before
    // anything goes out, and the next wake sends each once.
    const post = {
      id: `message:${key}:run-crash:call_crash`,
      text: "Crash note.",
      files: [
        {
          ref: (await runInDurableObject(sessionStub(target.key), async (_i, state) => {
            const row = state.storage.sql
              .exec<{ media: string }>(`SELECT media FROM outbox WHERE media IS NOT NULL LIMIT 1`)
              .toArray()[0]!;
            return (JSON.parse(row.media) as { ref: string }).ref;
          }))!,
          name: "again.md",
          mimeType: "text/markdown",
          sizeBytes: 23,
        },
      ],
    };
    const pending = await runInDurableObject(sessionStub(target.key), async (instance, state) => {
      const answer = await postMessageHere((instance as unknown as { s: SessionState }).s, post);
      expect(answer.ok).toBe(true);
      return state.storage.sql
        .exec<{ state: string }>(
          `SELECT state FROM outbox WHERE substr(id, 1, ?) = ?`,
          post.id.length,
          post.id,
        )
        .toArray()
        .map((row) => row.state);
    });
    // Slack can always reconcile a chunk (reconcilesChunk): it is queued as possibly attempted, so
    // after the crash below the next wake asks Slack first and, not finding them, sends each once.
    expect(pending).toEqual(["sending", "sending"]);
    await abortAllDurableObjects();
    // The same send again (a caller resumed after the crash) records nothing new.
    await runInDurableObject(sessionStub(target.key), async (instance) => {
      await postMessageHere((instance as unknown as { s: SessionState }).s, post);
    });
    await runDurableObjectAlarm(sessionStub(target.key));
    await waitFor(
      async () => (await texts(target.channel)).includes("Crash note."),
      20_000,
      "the crash note",
    );
    await runDurableObjectAlarm(sessionStub(target.key));
    await settle(200);
    const sent = await texts(target.channel);
    expect(sent.filter((text) => text === "The weekly report.")).toHaveLength(1);
    expect(sent.filter((text) => text === "Crash note.")).toHaveLength(1);
    const files = (await shared()).flatMap(
      (m) => (m as unknown as { files: Array<{ name: string }> }).files,
    );
    expect(files.map((file) => file.name).sort()).toEqual(["again.md", `${scenario}.md`]);
  });

  it("refuses a chat that is not the owner's, and a target it has no conversation with", async () => {
    const stranger = await slackConversation();
    const scenario = newScenario("msg-owner-only");
    const key = `agent:main:test-${scenario}`;
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_a",
            name: "message",
            arguments: { channel: "slack", target: `user:${stranger.sender}`, message: "hi a" },
          },
          {
            id: "call_b",
            name: "message",
            arguments: { channel: "slack", target: "channel:CNOWHERE1", message: "hi b" },
          },
          {
            id: "call_c",
            name: "message",
            arguments: { channel: "slack", target: "#general", message: "hi c" },
          },
        ],
      },
      { type: "text", text: `ok [scenario:${scenario}]` },
    ]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `send [scenario:${scenario}]`)),
    );
    const results = JSON.stringify((await modelRequests(scenario))[1]!.body);
    expect(results).toContain("not the owner's direct chat");
    expect(results).toContain("no conversation of this agent on slack is channel:CNOWHERE1");
    expect(results).toContain("names are not looked up here");
    expect(await texts(stranger.channel)).not.toContain("hi a");
  });
});
