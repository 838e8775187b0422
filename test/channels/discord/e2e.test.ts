import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../../functions/channels/companion/signature.ts";
import {
  deliver,
  discordCalls,
  discordMessages,
  fakeDiscord,
  messageCreate,
  newScenario,
  recorded,
  scriptDiscord,
  scriptModel,
  settle,
  settlesTo,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/**
 * Gateway dispatch (as the companion forwards it) → the Discord channel's socket parser → durable
 * accept → agent run against the fake model → reply through the fake Discord REST API, with the
 * defaults a user gets (pairing DMs, replyToMode off, streaming off, guild messages mention-gated).
 */

const MENTION = `<@${TEST_DISCORD.botId}>`;

describe("Discord end to end", { timeout: 60_000 }, () => {
  it("tells the companion the account to run: REST base, intents, and the token's env name (never the token)", async () => {
    const path = "/internal/companion/accounts";
    const headers = await signRequest(
      { id: "k1", secret: "test-companion-secret" },
      { method: "GET", path, body: new Uint8Array(), timestamp: Math.floor(Date.now() / 1000) },
    );
    const { accounts } = (await (
      await SELF.fetch(`https://edgeclaw.test${path}`, { headers })
    ).json()) as { accounts: Array<Record<string, unknown>> };
    const discord = accounts.filter((account) => account.channel === "discord");
    // GUILDS | GUILD_MESSAGES | GUILD_MESSAGE_REACTIONS | DIRECT_MESSAGES | DIRECT_MESSAGE_REACTIONS | MESSAGE_CONTENT
    const intents = 1 | (1 << 9) | (1 << 10) | (1 << 12) | (1 << 13) | (1 << 15);
    const settings = { apiBaseUrl: `${fakeDiscord()}/api/v10`, intents };
    expect(discord).toEqual([
      {
        channel: "discord",
        accountId: "default",
        label: "Discord (account default)",
        settings,
        secretEnv: { token: "DISCORD_BOT_TOKEN" },
      },
      {
        channel: "discord",
        accountId: "partial",
        label: "Discord (account partial)",
        settings,
        secretEnv: { token: "TEST_DISCORD_PARTIAL_TOKEN" },
      },
    ]);
    expect(JSON.stringify(accounts)).not.toContain(TEST_DISCORD.botToken);
  });

  it("answers an allowed DM once, with a nonce, even when the dispatch is delivered three times", async () => {
    const scenario = newScenario("dc-dm");
    await scriptModel(scenario, [{ type: "text", text: "Hello from **edgeclaw**." }]);
    const dmChannel = snowflake();
    const dispatch = messageCreate({
      author: TEST_DISCORD.allowed[0]!,
      channelId: dmChannel,
      content: `hi [scenario:${scenario}]`,
    });
    const deliveries = [await deliver(dispatch), await deliver(dispatch), await deliver(dispatch)];
    expect(deliveries.map((d) => d.statuses)).toEqual([["accepted"], ["duplicate"], ["duplicate"]]);

    const [reply] = await settlesTo(dmChannel, ["Hello from **edgeclaw**."]);
    expect(reply!.author.id).toBe(TEST_DISCORD.botId);
    expect(reply!.nonce).toMatch(/^[0-9a-f]{25}$/);
    expect(reply!.message_reference).toBeUndefined(); // replyToMode "off"
    expect(reply!.flags).toBe(4); // suppressEmbeds (default true)
    const posts = await discordCalls("POST /channels/messages", dmChannel);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.body).toMatchObject({
      enforce_nonce: true,
      allowed_mentions: { parse: ["users"] },
    });
    expect((await discordCalls("POST /typing", dmChannel)).length).toBeGreaterThan(0);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("in a gated guild channel answers only a mention (or a reply to the bot); the open channel needs none", async () => {
    const gated = newScenario("dc-gated");
    await scriptModel(gated, [{ type: "text", text: "You called?" }]);
    const user = TEST_DISCORD.allowed[1]!;
    const base = {
      author: user,
      channelId: TEST_DISCORD.gatedChannel,
      guildId: TEST_DISCORD.guild,
    };
    const before = (await discordMessages(TEST_DISCORD.gatedChannel)).length;
    await deliver(messageCreate({ ...base, content: `just chatting [scenario:${gated}]` }));
    await settle(1500);
    expect(await discordMessages(TEST_DISCORD.gatedChannel)).toHaveLength(before);
    expect(await recorded(gated)).toHaveLength(0);

    await deliver(
      messageCreate({
        ...base,
        content: `${MENTION} are you there? [scenario:${gated}]`,
        mentions: [TEST_DISCORD.botId],
      }),
    );
    await waitForText(TEST_DISCORD.gatedChannel, "You called?");
    expect(await recorded(gated)).toHaveLength(1);

    const replied = newScenario("dc-reply-to-bot");
    await scriptModel(replied, [{ type: "text", text: "Answering your reply." }]);
    await deliver(
      messageCreate({
        ...base,
        content: `and this? [scenario:${replied}]`,
        replyToAuthor: TEST_DISCORD.botId,
      }),
    );
    await waitForText(TEST_DISCORD.gatedChannel, "Answering your reply.");

    const open = newScenario("dc-open");
    await scriptModel(open, [{ type: "text", text: "Open room answer." }]);
    await deliver(
      messageCreate({
        author: user,
        channelId: TEST_DISCORD.openChannel,
        guildId: TEST_DISCORD.guild,
        content: `no mention [scenario:${open}]`,
      }),
    );
    await waitForText(TEST_DISCORD.openChannel, "Open room answer.");
  });

  it("answers in a thread of the open channel, which inherits the channel's entry (access and tools) and is its own conversation", async () => {
    const scenario = newScenario("dc-thread");
    await scriptModel(scenario, [{ type: "text", text: "Thread answer." }]);
    const thread = snowflake();
    const res = await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[2]!,
        channelId: thread,
        guildId: TEST_DISCORD.guild,
        content: `in a thread [scenario:${scenario}]`,
        channelContext: { type: 11, parent_id: TEST_DISCORD.openChannel },
      }),
    );
    expect(res.statuses).toEqual(["accepted"]);
    await settlesTo(thread, ["Thread answer."]);
    // The parent channel's tools.deny holds in its thread; a DM run keeps the tool.
    const toolNames = async (id: string) =>
      (((await recorded(id))[0]!.body.tools ?? []) as Array<{ name?: string }>).map(
        (tool) => tool.name,
      );
    expect((await toolNames(scenario)).length).toBeGreaterThan(0);
    expect(await toolNames(scenario)).not.toContain("write");
    const dm = newScenario("dc-dm-tools");
    await scriptModel(dm, [{ type: "text", text: "DM tools." }]);
    const dmChannel = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[2]!,
        channelId: dmChannel,
        content: `tools? [scenario:${dm}]`,
      }),
    );
    await settlesTo(dmChannel, ["DM tools."]);
    expect(await toolNames(dm)).toContain("write");
  });

  it("splits a long answer into chunks of at most 2000 characters, in order", async () => {
    const scenario = newScenario("dc-chunks");
    const paragraph = "word ".repeat(300).trim(); // 1499 characters
    const answer = [paragraph, paragraph, paragraph].join("\n\n");
    await scriptModel(scenario, [{ type: "text", text: answer }]);
    const dmChannel = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[3]!,
        channelId: dmChannel,
        content: `long please [scenario:${scenario}]`,
      }),
    );
    const messages = await waitForCount(dmChannel, 3);
    expect(messages.every((m) => [...m.content].length <= 2000)).toBe(true);
    expect(
      messages
        .map((m) => m.content)
        .join(" ")
        .replace(/\s+/g, " "),
    ).toBe(answer.replace(/\s+/g, " "));
    await settle(1000);
    expect(await discordMessages(dmChannel)).toHaveLength(3);
  });

  it("keeps to maxLinesPerMessage (17) lines per message", async () => {
    const scenario = newScenario("dc-lines");
    const answer = Array.from({ length: 40 }, (_, i) => `Step ${i + 1}.`).join("\n");
    await scriptModel(scenario, [{ type: "text", text: answer }]);
    const dmChannel = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[9]!,
        channelId: dmChannel,
        content: `list please [scenario:${scenario}]`,
      }),
    );
    const messages = await waitForCount(dmChannel, 3);
    await settle(1000);
    expect((await discordMessages(dmChannel)).map((m) => m.content.split("\n").length)).toEqual([
      17, 17, 6,
    ]);
    expect(messages.map((m) => m.content).join("\n")).toBe(answer);
  });

  it("streams into one preview that the answer edits (partial), quoting the user's message on the first chunk (replyToMode first)", async () => {
    const scenario = newScenario("dc-partial");
    const answer = "A streamed answer. ".repeat(12).trim();
    await scriptModel(scenario, [
      { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }] },
      { type: "text", text: answer },
    ]);
    const dmChannel = snowflake();
    const dispatch = messageCreate({
      author: TEST_DISCORD.allowed[8]!,
      channelId: dmChannel,
      content: `stream please [scenario:${scenario}]`,
    });
    await deliver(dispatch, "partial");
    const [reply] = await settlesTo(dmChannel, [answer]);
    expect(reply!.author.id).toBe(TEST_DISCORD.partialBotId); // the partial account's own bot
    const posts = await discordCalls("POST /channels/messages", dmChannel);
    const edits = await discordCalls("PATCH /channels/messages", dmChannel);
    expect(posts).toHaveLength(1); // the preview, later edited into the answer
    expect(reply!.message_reference).toEqual({ message_id: dispatch.d.id }); // replyToMode "first"
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(reply!.edits).toBeGreaterThanOrEqual(1);
    expect(edits.at(-1)!.body.content).toBe(answer);
  });

  it("waits out a 429 for retry_after, then posts once", async () => {
    const scenario = newScenario("dc-429");
    await scriptModel(scenario, [{ type: "text", text: "Posted after the rate limit." }]);
    const dmChannel = snowflake();
    await scriptDiscord({
      route: "POST /channels/messages",
      channelId: dmChannel,
      status: 429,
      retryAfter: 2,
    });
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[4]!,
        channelId: dmChannel,
        content: `hi [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dmChannel, ["Posted after the rate limit."]);
    const posts = await discordCalls("POST /channels/messages", dmChannel);
    expect(posts).toHaveLength(2);
    expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(2000);
  });

  it("a post whose answer was lost is sent again under its nonce, never posted twice", async () => {
    const scenario = newScenario("dc-lost");
    await scriptModel(scenario, [{ type: "text", text: "Landed once." }]);
    const dmChannel = snowflake();
    await scriptDiscord({
      route: "POST /channels/messages",
      channelId: dmChannel,
      dropConnection: true,
    });
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[5]!,
        channelId: dmChannel,
        content: `hi [scenario:${scenario}]`,
      }),
    );
    await settlesTo(dmChannel, ["Landed once."]);
    await settle(2000);
    expect(await discordMessages(dmChannel)).toHaveLength(1);
    // Within Discord's nonce window the repeat carries the same nonce, and Discord answers it with
    // the message it already created (history is read only past that window: reconcile.test.ts).
    const posts = await discordCalls("POST /channels/messages", dmChannel);
    expect(posts).toHaveLength(2);
    expect(posts[1]!.body.nonce).toBe(posts[0]!.body.nonce);
  });
});

async function waitForText(channelId: string, text: string): Promise<void> {
  const until = Date.now() + 45_000;
  while (Date.now() < until) {
    if ((await discordMessages(channelId)).some((m) => m.content === text && !m.deleted)) return;
    await settle(150);
  }
  throw new Error(`"${text}" never appeared in ${channelId}`);
}

async function waitForCount(channelId: string, count: number) {
  const until = Date.now() + 45_000;
  while (Date.now() < until) {
    const messages = (await discordMessages(channelId)).filter((m) => !m.deleted);
    if (messages.length >= count) return messages;
    await settle(150);
  }
  throw new Error(`fewer than ${count} messages in ${channelId}`);
}
