import { describe, expect, it } from "vitest";
import {
  discordAccount,
  discordChannelSchema,
  discordBotUserId,
} from "../../../functions/channels/discord/config.ts";
import { parseDiscordDispatch } from "../../../functions/channels/discord/parse.ts";
import type { InboundEnvelope } from "../../../functions/core/envelope.ts";
import {
  memberAdd,
  messageCreate,
  messageUpdate,
  reactionAdd,
  snowflake,
  TEST_DISCORD,
} from "./helpers.ts";

/** The Gateway parser on its own: envelope fields, dedup keys, mention rules, what is dropped. */

const BOT = TEST_DISCORD.botId;
const GUILD = "1300000000000000001";
const CHANNEL = "1300000000000000011";

function parse(dispatch: unknown, block: Record<string, unknown> = {}) {
  const account = discordAccount(
    discordChannelSchema.parse({ guilds: { [GUILD]: { ignoreOtherMentions: true } }, ...block }),
    "default",
  );
  return parseDiscordDispatch(dispatch, { account, botUserId: BOT, receivedAt: 1_700_000_000_000 });
}

function one(dispatch: unknown, block?: Record<string, unknown>): InboundEnvelope {
  const result = parse(dispatch, block);
  if (result.kind !== "envelopes" || result.envelopes.length !== 1)
    throw new Error(`expected one envelope, got ${JSON.stringify(result)}`);
  return result.envelopes[0]!;
}

describe("Discord Gateway parse", () => {
  it("reads the bot's user id from its token", () => {
    const account = discordAccount(discordChannelSchema.parse({}), "default");
    expect(discordBotUserId(TEST_DISCORD.botToken, account)).toBe(BOT);
    expect(discordBotUserId("not-a-token", { ...account, applicationId: "1234567" })).toBe(
      "1234567",
    );
  });

  it("turns a DM into a direct message whose reply goes to the DM channel", () => {
    const dm = snowflake();
    const envelope = one(
      messageCreate({ id: "42", author: "777777", channelId: dm, content: "hi" }),
    );
    expect(envelope).toMatchObject({
      dedupKey: `discord:bot${BOT}:msg:42`,
      kind: "message",
      chatType: "direct",
      peerId: "777777",
      senderId: "777777",
      text: "hi",
      wasMentioned: false,
      route: { to: dm, replyToMessageId: "42" },
    });
  });

  it("counts a <@bot> mention, a mention of the bot's managed role and a reply to the bot; not @everyone or another user", () => {
    const base = { author: "777777", channelId: CHANNEL, guildId: GUILD, content: "x" };
    expect(one(messageCreate({ ...base, mentions: [BOT] })).wasMentioned).toBe(true);
    expect(
      one(messageCreate({ ...base, mentionRoles: ["55"], botRoleIds: ["55"] })).wasMentioned,
    ).toBe(true);
    expect(one(messageCreate({ ...base, replyToAuthor: BOT })).wasMentioned).toBe(true);
    expect(one(messageCreate({ ...base })).wasMentioned).toBe(false);
    // ignoreOtherMentions on this guild: a message mentioning only someone else is dropped.
    expect(parse(messageCreate({ ...base, mentions: ["888888"] }))).toEqual({
      kind: "envelopes",
      envelopes: [],
      dropped: ["mentions someone else, not the bot (ignoreOtherMentions)"],
    });
  });

  it("gives an edit a key per edited_timestamp (the same edit twice is one event, a second edit another)", () => {
    const edit = (at: string) =>
      one(
        messageUpdate({
          id: "99",
          author: "777777",
          channelId: CHANNEL,
          guildId: GUILD,
          content: "changed",
          editedAt: at,
        }),
      );
    expect(edit("2026-01-01T00:00:00.000Z").dedupKey).toBe(
      `discord:bot${BOT}:msg:99:edit:2026-01-01T00:00:00.000Z`,
    );
    expect(edit("2026-01-01T00:00:00.000Z").dedupKey).toBe(
      edit("2026-01-01T00:00:00.000Z").dedupKey,
    );
    expect(edit("2026-01-01T00:01:00.000Z").dedupKey).not.toBe(
      edit("2026-01-01T00:00:00.000Z").dedupKey,
    );
    expect(edit("2026-01-01T00:00:00.000Z").kind).toBe("system");
    // An embed unfurl (no author, no edited_timestamp) is not an edit.
    const unfurl = {
      op: 0,
      t: "MESSAGE_UPDATE",
      s: 1,
      d: { id: "99", channel_id: CHANNEL, embeds: [] },
    };
    expect(parse(unfurl)).toMatchObject({ kind: "envelopes", envelopes: [] });
  });

  it("keeps reactions to the bot's messages only (reactionNotifications own), as system events", () => {
    const mine = one(
      reactionAdd({ user: "777777", channelId: CHANNEL, guildId: GUILD, messageId: "5" }),
    );
    expect(mine).toMatchObject({
      kind: "system",
      dedupKey: `discord:bot${BOT}:react:5:777777:👍`,
      chatType: "channel",
      peerId: CHANNEL,
      teamId: GUILD,
    });
    expect(
      parse(
        reactionAdd({
          user: "777777",
          channelId: CHANNEL,
          guildId: GUILD,
          messageId: "5",
          messageAuthor: "123456",
        }),
      ),
    ).toMatchObject({ envelopes: [] });
    expect(
      one(
        reactionAdd({
          user: "777777",
          channelId: CHANNEL,
          guildId: GUILD,
          messageId: "5",
          messageAuthor: "123456",
        }),
        { reactionNotifications: "all" },
      ).kind,
    ).toBe("system");
    expect(parse(reactionAdd({ user: BOT, channelId: CHANNEL, messageId: "5" }))).toMatchObject({
      envelopes: [],
      dropped: ["the bot's own reaction"],
    });
  });

  it("makes a member join a system event of the guild", () => {
    expect(one(memberAdd({ user: "777777", guildId: GUILD }))).toMatchObject({
      kind: "system",
      chatType: "channel",
      peerId: GUILD,
      teamId: GUILD,
      senderId: "777777",
    });
  });

  it("puts a thread under its parent channel, and drops system messages, group DMs and unknown dispatches", () => {
    const thread = one(
      messageCreate({
        author: "777777",
        channelId: "1400000000000000001",
        guildId: GUILD,
        content: "t",
        channelContext: { type: 11, parent_id: CHANNEL },
      }),
    );
    expect(thread).toMatchObject({
      peerId: "1400000000000000001",
      parentPeerId: CHANNEL,
      route: { to: "1400000000000000001" },
    });
    const join = messageCreate({
      author: "777777",
      channelId: CHANNEL,
      guildId: GUILD,
      content: "",
    });
    (join.d as { type: number }).type = 7;
    expect(parse(join)).toMatchObject({
      envelopes: [],
      dropped: ["message type 7 is not a chat message"],
    });
    const groupDm = messageCreate({
      author: "777777",
      channelId: "66",
      content: "hi",
      channelContext: { type: 3 },
    });
    expect(parse(groupDm)).toMatchObject({
      envelopes: [],
      dropped: ["group DMs are off (dm.groupEnabled)"],
    });
    expect(parse({ op: 0, t: "TYPING_START", s: 1, d: {} })).toMatchObject({ envelopes: [] });
    expect(parse({ op: 11 })).toMatchObject({ kind: "malformed" });
    expect(parse({ op: 0, t: "MESSAGE_CREATE", s: 1, d: { id: "x" } })).toMatchObject({
      kind: "malformed",
    });
  });
});
