import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OutboundMessage, SendContext } from "../../../functions/channels/adapter.ts";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import type { SlackAccount } from "../../../functions/channels/slack/config.ts";
import { slackChannel } from "../../../functions/channels/slack/index.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { reconcileSlackMessage, sendSlackMessage } from "../../../functions/channels/slack/send.ts";
import type { Env } from "../../../workers/env.ts";
import { slackCalls, slackMessages, uniqueId } from "./helpers.ts";

/**
 * Reconcile against the fake Slack Web API: a post whose answer was lost must be found by its
 * metadata marker however busy the conversation got after it, and a missing one reported missing.
 */
const testEnv = env as unknown as Env;
const fakeSlack = () => String(testEnv.FAKE_SLACK_URL);

const ctx: SendContext<SlackAccount> = contextFor(
  slackChannel,
  {
    env: {},
    config: parseConfig({
      channels: {
        slack: {
          apiBaseUrl: `${fakeSlack()}/api/`,
          botToken: "xoxb-reconcile-test",
          signingSecret: "s",
          streaming: { mode: "off" },
        },
      },
    }),
  },
  "default",
);

async function flood(channel: string, count: number, threadTs?: string) {
  await fetch(`${fakeSlack()}/_control/flood`, {
    method: "POST",
    body: JSON.stringify({ channel, count, ...(threadTs ? { thread_ts: threadTs } : {}) }),
  });
}

const chunk = (route: ReplyRoute, text: string): OutboundMessage => ({
  id: uniqueId("run:r:"),
  route,
  text,
  chunkIndex: 0,
  chunkCount: 1,
  queuedAt: Date.now(),
});

describe("Slack reconcile", () => {
  it("finds a landed post in a busy channel (450 messages after it) and reports an unsent one missing", async () => {
    const channel = uniqueId("C");
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: channel,
      extra: { chatType: "channel" },
    };
    await flood(channel, 30); // older chatter, before the attempt
    const landed = chunk(route, "the answer");
    const sent = await sendSlackMessage(landed, ctx);
    expect(sent.ok).toBe(true);
    await flood(channel, 450);

    expect(await reconcileSlackMessage(landed, ctx)).toEqual({
      outcome: "landed",
      platformMessageId: sent.ok ? sent.platformMessageId : "",
    });
    expect(await reconcileSlackMessage(chunk(route, "never sent"), ctx)).toEqual({
      outcome: "missing",
    });

    // It read from the attempt onwards, page by page, not the whole channel.
    const reads = await slackCalls("conversations.history", channel);
    expect(reads.length).toBeGreaterThanOrEqual(3);
    expect(
      reads.every(
        (call) =>
          Number(call.args.oldest) > 0 && Number(call.args.oldest) <= (landed.queuedAt ?? 0) / 1000,
      ),
    ).toBe(true);
    expect(
      reads.some((call) => typeof call.args.cursor === "string" && call.args.cursor !== ""),
    ).toBe(true);
  });

  it("finds a landed post in a long, busy thread (450 replies just before it, 450 after)", async () => {
    const channel = uniqueId("C");
    const threadTs = `${Math.floor(Date.now() / 1000) - 5}.000100`;
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: channel,
      threadId: threadTs,
      extra: { chatType: "channel" },
    };
    // Replies come oldest first: the ones within the clock-skew margin before the attempt fill the first pages.
    await flood(channel, 450, threadTs);
    const landed = chunk(route, "threaded answer");
    const sent = await sendSlackMessage(landed, ctx);
    await flood(channel, 450, threadTs);
    expect(await reconcileSlackMessage(landed, ctx)).toEqual({
      outcome: "landed",
      platformMessageId: sent.ok ? sent.platformMessageId : "",
    });
    expect((await slackCalls("conversations.replies", channel)).length).toBeGreaterThanOrEqual(3);
    expect((await slackMessages(channel)).filter((m) => m.text === "threaded answer")).toHaveLength(
      1,
    );
  });

  it("calls a slash-command response_url reply untraceable and never idempotent", async () => {
    const route: ReplyRoute = {
      channel: "slack",
      accountId: "default",
      to: "C0OPEN",
      extra: { responseUrl: `${fakeSlack()}/response/${uniqueId("R")}` },
    };
    expect(await reconcileSlackMessage(chunk(route, "x"), ctx)).toMatchObject({
      outcome: "untraceable",
      idempotent: false,
    });
  });
});
