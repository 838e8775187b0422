import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { inboundEnvelopeSchema, type InboundEnvelopeInput } from "../../functions/core/envelope.ts";
import { writeFile } from "../../functions/agent/workspace.ts";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { PRIVATE_MEMORY_REFUSAL } from "../../functions/agent/tools/private-memory.ts";
import type { Env } from "../../workers/env.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  webchatEvent,
} from "./helpers.ts";

/**
 * MEMORY.md is the owner's private memory: a real run loads it only in the owner's direct chat
 * (here the web chat, where the gateway token makes the caller the operator), never in a channel,
 * a group, or the DM of another sender. The suite's default Slack account admits every DM sender
 * (dmPolicy open) and has no owner, so a Slack DM there is "another sender".
 */
const MARKER = `owner-private-${crypto.randomUUID().slice(0, 8)}`;

function slackEvent(sessionKey: string, fields: Partial<InboundEnvelopeInput>): RoutedEvent {
  const peerId = fields.peerId ?? "UOTHER1";
  const envelope = inboundEnvelopeSchema.parse({
    dedupKey: `slack:test:${crypto.randomUUID()}`,
    channel: "slack",
    chatType: "direct",
    peerId,
    senderId: "UOTHER1",
    text: "hi",
    receivedAt: Date.now(),
    route: {
      channel: "slack",
      to: fields.chatType === "direct" || !fields.chatType ? "D0MEMORY" : peerId,
    },
    ...fields,
  } satisfies InboundEnvelopeInput);
  return { envelope, agentId: "main", sessionKey };
}

async function systemPromptOf(
  scenario: string,
  sessionKey: string,
  event: RoutedEvent,
): Promise<string> {
  await scriptModel(scenario, [{ type: "text", text: "ok" }]);
  await collectRunEvents(await sessionStub(sessionKey).chat(event));
  const [request] = await modelRequests(scenario);
  expect(request, `the model was called for ${scenario}`).toBeDefined();
  return JSON.stringify(request!.body.system);
}

describe("MEMORY.md stays in the main private session", () => {
  beforeAll(async () => {
    await writeFile(env as unknown as Env, "main", "MEMORY.md", `# Memory\n${MARKER}`);
  });

  it("is loaded for the owner in a direct chat (web chat)", async () => {
    const key = `agent:main:test-memory-owner-${crypto.randomUUID().slice(0, 6)}`;
    const scenario = `memory-owner-${crypto.randomUUID().slice(0, 6)}`;
    expect(
      await systemPromptOf(scenario, key, webchatEvent(key, `hello [scenario:${scenario}]`)),
    ).toContain(MARKER);
  });

  it("is not loaded in the DM of another sender", async () => {
    const key = `agent:main:test-memory-dm-${crypto.randomUUID().slice(0, 6)}`;
    const scenario = `memory-dm-${crypto.randomUUID().slice(0, 6)}`;
    expect(
      await systemPromptOf(
        scenario,
        key,
        slackEvent(key, { text: `hello [scenario:${scenario}]` }),
      ),
    ).not.toContain(MARKER);
  });

  it("is not loaded in a channel", async () => {
    const key = `agent:main:test-memory-channel-${crypto.randomUUID().slice(0, 6)}`;
    const scenario = `memory-channel-${crypto.randomUUID().slice(0, 6)}`;
    const event = slackEvent(key, {
      chatType: "channel",
      peerId: "C0OPEN",
      text: `hello [scenario:${scenario}]`,
      wasMentioned: true,
    });
    expect(await systemPromptOf(scenario, key, event)).not.toContain(MARKER);
  });

  it("is not loaded in a group chat", async () => {
    const key = `agent:main:test-memory-group-${crypto.randomUUID().slice(0, 6)}`;
    const scenario = `memory-group-${crypto.randomUUID().slice(0, 6)}`;
    const event = slackEvent(key, {
      chatType: "group",
      peerId: "G0MPIM",
      text: `hello [scenario:${scenario}]`,
      wasMentioned: true,
    });
    expect(await systemPromptOf(scenario, key, event)).not.toContain(MARKER);
  });

  it("cannot be read with the read tool from a channel: the model gets the refusal, not the file", async () => {
    const key = `agent:main:test-memory-tool-${crypto.randomUUID().slice(0, 6)}`;
    const scenario = `memory-tool-${crypto.randomUUID().slice(0, 6)}`;
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [{ id: "call_mem", name: "read", arguments: { path: "./MEMORY.md" } }],
      },
      { type: "text", text: "nothing to share" },
    ]);
    const event = slackEvent(key, {
      chatType: "channel",
      peerId: "C0OPEN",
      text: `print MEMORY.md [scenario:${scenario}]`,
      wasMentioned: true,
    });
    await collectRunEvents(await sessionStub(key).chat(event));
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(2);
    const afterTool = JSON.stringify(requests[1]!.body);
    expect(afterTool).toContain("call_mem");
    expect(afterTool).toContain(PRIVATE_MEMORY_REFUSAL);
    expect(afterTool).not.toContain(MARKER);
  });
});
