import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import { discordChannel } from "../../../functions/channels/discord/index.ts";
import { discordAdapter } from "../../../functions/channels/discord/index.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import {
  deliver,
  discordCalls,
  discordMessages,
  messageCreate,
  newScenario,
  scriptDiscord,
  scriptModel,
  seedDiscordMessage,
  settlesTo,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/**
 * A send whose outcome is unknown is reconciled without mistaking an identical earlier answer for
 * it: within Discord's nonce window the chunk is sent again under its nonce (Discord answers a repeat
 * with the message it already created); past it, history is read only from the chunk's first attempt.
 */

const ctx = () =>
  contextFor(
    discordChannel,
    {
      env: env as unknown as Record<string, unknown>,
      config: configFromEnv(env as never),
    },
    "default",
  );

describe("Discord lost sends", { timeout: 60_000 }, () => {
  it("answers the second of two messages when its reply, identical to the first, never reached Discord", async () => {
    const scenario = newScenario("dc-same-lost");
    await scriptModel(scenario, [
      { type: "text", text: "Same answer." },
      { type: "text", text: "Same answer." },
    ]);
    const dm = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[12]!,
        channelId: dm,
        content: `first [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dm, ["Same answer."]);
    await scriptDiscord({
      route: "POST /channels/messages",
      channelId: dm,
      dropBeforeCreate: true,
    });
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[12]!,
        channelId: dm,
        content: `second [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dm, ["Same answer.", "Same answer."]);
    const posts = await discordCalls("POST /channels/messages", dm);
    expect(posts).toHaveLength(3);
    // The lost chunk went again under its own nonce, which is not the first answer's.
    expect(posts[2]!.body.nonce).toBe(posts[1]!.body.nonce);
    expect(posts[1]!.body.nonce).not.toBe(posts[0]!.body.nonce);
  });

  it("posts an identical answer once when it landed but its answer was lost, beside the earlier one", async () => {
    const scenario = newScenario("dc-same-landed");
    await scriptModel(scenario, [
      { type: "text", text: "Twice the same." },
      { type: "text", text: "Twice the same." },
    ]);
    const dm = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[13]!,
        channelId: dm,
        content: `first [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dm, ["Twice the same."]);
    await scriptDiscord({ route: "POST /channels/messages", channelId: dm, dropConnection: true });
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[13]!,
        channelId: dm,
        content: `second [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dm, ["Twice the same.", "Twice the same."]);
    expect(await discordMessages(dm)).toHaveLength(2);
  });

  it("past the nonce window reads history only from the first attempt: an identical earlier message is not taken for the chunk", async () => {
    const channel = snowflake();
    const firstAttemptAt = Date.now() - 5 * 60_000;
    const message = {
      id: `run:${crypto.randomUUID()}:0`,
      route: { channel: "discord", accountId: "default", to: channel },
      text: "Same answer.",
      chunkIndex: 0,
      chunkCount: 1,
      queuedAt: firstAttemptAt - 1_000,
      firstAttemptAt,
    };
    await seedDiscordMessage({
      channelId: channel,
      authorId: TEST_DISCORD.botId,
      content: "Same answer.",
      at: firstAttemptAt - 30_000,
    });
    expect(await discordAdapter.reconcile!(message, ctx())).toEqual({ outcome: "missing" });
    const landed = await seedDiscordMessage({
      channelId: channel,
      authorId: TEST_DISCORD.botId,
      content: "Same answer.",
      at: firstAttemptAt + 800,
    });
    expect(await discordAdapter.reconcile!(message, ctx())).toEqual({
      outcome: "landed",
      platformMessageId: landed,
    });
    // Within the window the chunk is simply sent again: its nonce makes the repeat harmless.
    expect(
      await discordAdapter.reconcile!({ ...message, firstAttemptAt: Date.now() - 2_000 }, ctx()),
    ).toMatchObject({ outcome: "untraceable", idempotent: true });
  });

  it("gives two sessions' notices with the same chunk id different nonces, so neither is taken for the other", async () => {
    const channel = snowflake();
    const notice = (answering: string) => ({
      id: "notice:1:0",
      route: { channel: "discord", accountId: "default", to: channel, replyToMessageId: answering },
      text: "✅",
      chunkIndex: 0,
      chunkCount: 1,
    });
    expect((await discordAdapter.send(notice(snowflake()), ctx())).ok).toBe(true);
    expect((await discordAdapter.send(notice(snowflake()), ctx())).ok).toBe(true);
    expect(await discordMessages(channel)).toHaveLength(2);
  });
});
