import { describe, expect, it } from "vitest";
import {
  deliver,
  discordMessages,
  forgetPairingWhenDone,
  memberAdd,
  messageCreate,
  messageUpdate,
  newScenario,
  parseOnly,
  postInteraction,
  reactionAdd,
  recorded,
  scriptModel,
  settle,
  signInteraction,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/**
 * Strangers and forgeries against the defaults a user gets (pairing DMs, allowlisted guild with a
 * channels map, mention gating). Nothing a stranger does reaches the model; only a stranger's own
 * DM earns (one) pairing code; edits, reactions and joins never start a run or earn a code.
 */

const MENTION = `<@${TEST_DISCORD.botId}>`;

async function quietFor(channelId: string, ms = 2000): Promise<void> {
  await settle(ms);
  expect((await discordMessages(channelId)).filter((m) => !m.deleted)).toEqual([]);
}

describe("Discord strangers and forgeries", { timeout: 60_000 }, () => {
  it("gives a stranger's DM one pairing code, stays silent on the next, and never reaches the model", async () => {
    const stranger = snowflake();
    forgetPairingWhenDone(stranger);
    const scenario = newScenario("dc-stranger");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const dmChannel = snowflake();
    await deliver(
      messageCreate({
        author: stranger,
        channelId: dmChannel,
        content: `hello [scenario:${scenario}]`,
      }),
    );
    const until = Date.now() + 30_000;
    while (Date.now() < until && (await discordMessages(dmChannel)).length === 0) await settle(150);
    await deliver(
      messageCreate({
        author: stranger,
        channelId: dmChannel,
        content: `again [scenario:${scenario}]`,
      }),
    );
    await settle(2000);
    const messages = await discordMessages(dmChannel);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.content).toMatch(/pairing/i);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("ignores a stranger in an allowlisted channel, anyone in an unlisted channel, and any other guild", async () => {
    const scenario = newScenario("dc-guild-stranger");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const mention = {
      content: `${MENTION} obey [scenario:${scenario}]`,
      mentions: [TEST_DISCORD.botId],
    };
    await deliver(
      messageCreate({
        author: snowflake(),
        channelId: TEST_DISCORD.openChannel,
        guildId: TEST_DISCORD.guild,
        ...mention,
      }),
    );
    await deliver(
      messageCreate({
        author: TEST_DISCORD.owner,
        channelId: TEST_DISCORD.otherChannel,
        guildId: TEST_DISCORD.guild,
        ...mention,
      }),
    );
    const otherGuildChannel = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.owner,
        channelId: otherGuildChannel,
        guildId: snowflake(),
        ...mention,
      }),
    );
    // A thread whose parent is the unlisted channel does not inherit the open channel's entry.
    const thread = snowflake();
    await deliver(
      messageCreate({
        author: TEST_DISCORD.owner,
        channelId: thread,
        guildId: TEST_DISCORD.guild,
        ...mention,
        channelContext: { type: 11, parent_id: TEST_DISCORD.otherChannel },
      }),
    );
    await settle(2500);
    expect(await recorded(scenario)).toHaveLength(0);
    expect(
      (await discordMessages(TEST_DISCORD.openChannel)).filter(
        (m) => m.content === "must not be said",
      ),
    ).toEqual([]);
    for (const channel of [TEST_DISCORD.otherChannel, otherGuildChannel, thread])
      expect(await discordMessages(channel)).toEqual([]);
  });

  it("lets a sender holding the channel's role in, and nobody else who is not listed", async () => {
    const withRole = newScenario("dc-role");
    await scriptModel(withRole, [{ type: "text", text: "Role holder answered." }]);
    const without = newScenario("dc-no-role");
    await scriptModel(without, [{ type: "text", text: "must not be said" }]);
    const base = { channelId: TEST_DISCORD.rolesChannel, guildId: TEST_DISCORD.guild };
    await deliver(
      messageCreate({
        ...base,
        author: snowflake(),
        roles: ["1600000000000000999"],
        content: `let me in [scenario:${without}]`,
      }),
    );
    await deliver(
      messageCreate({
        ...base,
        author: snowflake(),
        roles: [TEST_DISCORD.role],
        content: `hello [scenario:${withRole}]`,
      }),
    );
    const until = Date.now() + 30_000;
    while (
      Date.now() < until &&
      !(await discordMessages(TEST_DISCORD.rolesChannel)).some(
        (m) => m.content === "Role holder answered.",
      )
    )
      await settle(150);
    await settle(1500);
    expect((await discordMessages(TEST_DISCORD.rolesChannel)).map((m) => m.content)).toEqual([
      "Role holder answered.",
    ]);
    expect(await recorded(without)).toHaveLength(0);
  });

  it("never lets a stranger's edit, reaction or join start a run or earn a pairing code", async () => {
    const stranger = snowflake();
    forgetPairingWhenDone(stranger);
    const scenario = newScenario("dc-side-door");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const dmChannel = snowflake();
    const results = [
      await deliver(
        messageUpdate({
          id: snowflake(),
          author: stranger,
          channelId: dmChannel,
          content: `now obey me [scenario:${scenario}]`,
        }),
      ),
      await deliver(reactionAdd({ user: stranger, channelId: dmChannel, messageId: snowflake() })),
      await deliver(
        messageUpdate({
          id: snowflake(),
          author: stranger,
          channelId: TEST_DISCORD.openChannel,
          guildId: TEST_DISCORD.guild,
          content: `${MENTION} obey [scenario:${scenario}]`,
        }),
      ),
      await deliver(
        reactionAdd({
          user: stranger,
          channelId: TEST_DISCORD.openChannel,
          guildId: TEST_DISCORD.guild,
          messageId: snowflake(),
        }),
      ),
      await deliver(memberAdd({ user: stranger, guildId: TEST_DISCORD.guild })),
    ];
    // Each is a system event, stored (the companion may delete it) and then refused by access.
    expect(results.map((r) => r.statuses)).toEqual([
      ["accepted"],
      ["accepted"],
      ["accepted"],
      ["accepted"],
      ["accepted"],
    ]);
    await quietFor(dmChannel);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("drops the bot's own messages in the parser and other bots' by access (allowBots off)", async () => {
    const scenario = newScenario("dc-bots");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const ownMessage = messageCreate({
      author: TEST_DISCORD.botId,
      channelId: TEST_DISCORD.openChannel,
      guildId: TEST_DISCORD.guild,
      content: `echo [scenario:${scenario}]`,
    });
    expect(await parseOnly(ownMessage)).toEqual({
      kind: "envelopes",
      envelopes: [],
      dropped: ["the bot's own message"],
    });
    expect(await deliver(ownMessage)).toEqual({ status: "stored", statuses: [] });
    await deliver(
      messageCreate({
        author: TEST_DISCORD.allowed[6]!,
        bot: true,
        channelId: TEST_DISCORD.openChannel,
        guildId: TEST_DISCORD.guild,
        content: `beep [scenario:${scenario}]`,
      }),
    );
    await settle(2000);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("refuses forged, stale or unsigned interactions with 401 and runs nothing", async () => {
    const scenario = newScenario("dc-forged");
    await scriptModel(scenario, [{ type: "text", text: "must not be said" }]);
    const interaction = {
      id: snowflake(),
      application_id: TEST_DISCORD.applicationId,
      type: 2,
      token: `tok-${snowflake()}`,
      channel_id: snowflake(),
      user: { id: TEST_DISCORD.owner, username: "owner" },
      data: { name: "ask", options: [{ name: "q", type: 3, value: `hi [scenario:${scenario}]` }] },
    };
    const body = JSON.stringify(interaction);
    const good = await signInteraction(body);
    const cases: Array<Record<string, string>> = [
      {},
      {
        ...good,
        "x-signature-ed25519": good["x-signature-ed25519"]!.replace(/^./, (c) =>
          c === "0" ? "1" : "0",
        ),
      },
      await signInteraction(body.replace("hi", "HI")),
      await signInteraction(body, Math.floor(Date.now() / 1000) - 600),
      { ...good, "x-signature-timestamp": String(Number(good["x-signature-timestamp"]) + 1) },
    ];
    for (const headers of cases)
      expect((await postInteraction(interaction, headers)).status).toBe(401);
    await settle(1500);
    expect(await recorded(scenario)).toHaveLength(0);
  });
});
