import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import type { SlackAccount } from "../../../functions/channels/slack/config.ts";
import { slackChannel } from "../../../functions/channels/slack/index.ts";
import type {
  OutboundMessage,
  ProgressState,
  SendContext,
} from "../../../functions/channels/adapter.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { slackProgress } from "../../../functions/channels/slack/progress.ts";
import { sendSlackMessage } from "../../../functions/channels/slack/send.ts";
import type { Env } from "../../../workers/env.ts";
import { scriptSlack, slackCalls, slackMessages, uniqueId } from "./helpers.ts";

const testEnv = env as unknown as Env;

function context(streaming: Record<string, unknown>): SendContext<SlackAccount> {
  const config = parseConfig({
    channels: {
      slack: {
        apiBaseUrl: `${String(testEnv.FAKE_SLACK_URL)}/api/`,
        botToken: "xoxb-stream-test",
        signingSecret: "s",
        typingReaction: "hourglass_flowing_sand",
        streaming,
      },
    },
    messages: { ackReactionScope: "all" },
  });
  return contextFor(slackChannel, { env: {}, config }, "default");
}

async function run(
  route: ReplyRoute,
  ctx: SendContext<SlackAccount>,
  deltas: string[],
): Promise<ProgressState> {
  let state: ProgressState = await slackProgress(route, { type: "run-started" }, {}, ctx);
  let soFar = "";
  for (const text of deltas) {
    soFar += text;
    state = await slackProgress(route, { type: "text-delta", text, soFar }, state, ctx);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the preview edit interval
  }
  return slackProgress(route, { type: "run-finished" }, state, ctx);
}

const reply = (route: ReplyRoute, text: string, state: ProgressState): OutboundMessage => ({
  id: uniqueId("out"),
  route,
  text,
  chunkIndex: 0,
  chunkCount: 1,
  progressState: state,
});

describe("Slack streaming previews", () => {
  it("posts a preview in a top-level DM, edits it, and turns it into the final reply", async () => {
    const channel = uniqueId("D");
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: channel,
      replyToMessageId: "1700000000.000001",
      extra: { chatType: "direct" },
    };
    const ctx = context({ mode: "partial" });
    const state = await run(route, ctx, ["Hello", " world"]);
    expect(state.previewTs).toBeTruthy();
    expect((await slackCalls("chat.update", channel)).length).toBeGreaterThanOrEqual(1);

    const result = await sendSlackMessage(reply(route, "Hello world, **final**.", state), ctx);
    expect(result).toEqual({ ok: true, platformMessageId: state.previewTs });
    const messages = await slackMessages(channel);
    expect(messages.map((m) => m.text)).toEqual(["Hello world, *final*."]);
    // typing reaction added at the start and removed at the end
    expect((await slackCalls("reactions.add", channel)).map((c) => c.args.name)).toEqual([
      "hourglass_flowing_sand",
    ]);
    expect(await slackCalls("reactions.remove", channel)).toHaveLength(1);
  });

  it("streams natively into a reply thread, then stops the stream and edits it to the final text", async () => {
    const channel = uniqueId("C");
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: channel,
      threadId: "1700000000.000009",
      replyToMessageId: "1700000000.000010",
      extra: { chatType: "channel", teamId: "TTEST", senderId: "UHUMAN1" },
    };
    const ctx = context({ mode: "partial", nativeTransport: true });
    const state = await run(route, ctx, ["Thinking", " aloud"]);
    expect(state.streamTs).toBeTruthy();
    const started = await slackCalls("chat.startStream", channel);
    expect(started[0]!.args).toMatchObject({
      thread_ts: "1700000000.000009",
      recipient_user_id: "UHUMAN1",
      recipient_team_id: "TTEST",
    });
    expect(await slackCalls("assistant.threads.setStatus")).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          args: expect.objectContaining({ channel_id: channel, status: "" }),
        }),
      ]),
    );

    await sendSlackMessage(reply(route, "The answer.", state), ctx);
    expect(await slackCalls("chat.stopStream", channel)).toHaveLength(1);
    expect((await slackMessages(channel)).map((m) => m.text)).toEqual(["The answer."]);
    expect(await slackCalls("chat.postMessage", channel)).toHaveLength(0);
  });

  it("falls back to a normal reply when the preview cannot be edited, leaving one message", async () => {
    const channel = uniqueId("D");
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: channel,
      extra: { chatType: "direct" },
    };
    const ctx = context({ mode: "partial" });
    const state = await run(route, ctx, ["partial text"]);
    await scriptSlack({ method: "chat.update", channel, error: "cant_update_message" });
    const result = await sendSlackMessage(reply(route, "Complete text.", state), ctx);
    expect(result.ok).toBe(true);
    expect((await slackMessages(channel)).filter((m) => !m.deleted).map((m) => m.text)).toEqual([
      "Complete text.",
    ]);
  });

  it("streams nothing when streaming.mode is off", async () => {
    const channel = uniqueId("D");
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: channel,
      extra: { chatType: "direct" },
    };
    const state = await run(route, context({ mode: "off" }), ["a", "b"]);
    expect(state.previewTs).toBeUndefined();
    expect(await slackCalls("chat.postMessage", channel)).toHaveLength(0);
  });
});
