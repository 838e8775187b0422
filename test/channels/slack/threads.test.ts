import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import { slackChannel } from "../../../functions/channels/slack/index.ts";
import { slackAdapter } from "../../../functions/channels/slack/index.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import type { Env } from "../../../workers/env.ts";
import { uniqueId } from "./helpers.ts";

const ctx = () =>
  contextFor(
    slackChannel,
    { env: env as unknown as Env, config: configFromEnv(env as unknown as Env) },
    "default",
  );

describe("Slack thread participation", () => {
  it("is true for a thread the bot posted in and false for one it did not", async () => {
    const channel = uniqueId("C");
    const threadTs = "1700000001.000100";
    const sent = await slackAdapter.send(
      {
        id: `t:${uniqueId("o")}`,
        route: { channel: "slack", accountId: "default", to: channel, threadId: threadTs },
        text: "bot reply",
        chunkIndex: 0,
        chunkCount: 1,
      },
      ctx(),
    );
    expect(sent.ok).toBe(true);
    const route = (thread: string) => ({
      channel: "slack",
      accountId: "default",
      to: channel,
      threadId: thread,
    });
    expect(await slackAdapter.participatedInThread!(route(threadTs), ctx())).toBe(true);
    expect(await slackAdapter.participatedInThread!(route("1700000002.000200"), ctx())).toBe(false);
  });
});
