import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextFor } from "../../../functions/channels/channel-account.ts";
import { discordChannel } from "../../../functions/channels/discord/index.ts";
import { discordAdapter } from "../../../functions/channels/discord/index.ts";
import { configFromEnv } from "../../../functions/channels/gateway-config.ts";
import {
  deliver,
  discordCalls,
  fakeDiscord,
  messageCreate,
  newScenario,
  scriptDiscord,
  scriptModel,
  settle,
  settlesTo,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/**
 * Discord's rate-limit headers are read ahead of time: once a bucket's X-RateLimit-Remaining is 0,
 * the next send on it waits for X-RateLimit-Reset-After through the outbox's schedule instead of
 * earning a 429; a global 429 holds every route of that bot until its Retry-After.
 */

async function bucketRefusals(channelId: string): Promise<number> {
  return (
    (await (await fetch(`${fakeDiscord()}/_control/ratelimit?channel_id=${channelId}`)).json()) as {
      refused: number;
    }
  ).refused;
}

describe("Discord rate limits", { timeout: 60_000 }, () => {
  it("holds the third chunk of a reply until the channel's bucket resets instead of eating a 429", async () => {
    const scenario = newScenario("dc-bucket");
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    await scriptModel(scenario, [{ type: "text", text: lines.join("\n") }]);
    const dm = snowflake();
    await fetch(`${fakeDiscord()}/_control/ratelimit`, {
      method: "POST",
      body: JSON.stringify({ channelId: dm, limit: 2, resetAfter: 2 }),
    });
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[14]!,
        channelId: dm,
        content: `long please [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dm, [
      lines.slice(0, 17).join("\n"),
      lines.slice(17, 34).join("\n"),
      lines.slice(34).join("\n"),
    ]);
    const posts = await discordCalls("POST /channels/messages", dm);
    expect(posts).toHaveLength(3);
    expect(await bucketRefusals(dm)).toBe(0);
    expect(posts[2]!.at - posts[0]!.at).toBeGreaterThanOrEqual(1900);
  });

  it("after a global 429 holds the bot's sends to every channel until Retry-After, without a request", async () => {
    // A bot of its own, so the global hold touches no other test.
    const token = `${btoa("1100000000000000099").replace(/=+$/, "")}.GfakeT.global-test`;
    const ctx = contextFor(
      discordChannel,
      {
        env: { ...(env as unknown as Record<string, unknown>), DISCORD_BOT_TOKEN: token },
        config: configFromEnv(env as never),
      },
      "default",
    );
    const chunk = (to: string) => ({
      id: `run:${crypto.randomUUID()}:0`,
      route: { channel: "discord", accountId: "default", to },
      text: "hi",
      chunkIndex: 0,
      chunkCount: 1,
    });
    const [first, second] = [snowflake(), snowflake()];
    await scriptDiscord({
      route: "POST /channels/messages",
      channelId: first,
      status: 429,
      retryAfter: 1,
      global: true,
    });
    const limited = await discordAdapter.send(chunk(first), ctx);
    expect(limited).toMatchObject({ ok: false, retryable: true });
    expect("notSent" in limited && limited.notSent).toBeFalsy();
    const held = await discordAdapter.send(chunk(second), ctx);
    expect(held).toMatchObject({ ok: false, retryable: true, notSent: true });
    expect((held as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
    expect((held as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(1000);
    expect(await discordCalls(undefined, second)).toEqual([]);
    await settle(1100);
    expect((await discordAdapter.send(chunk(second), ctx)).ok).toBe(true);
  });
});
