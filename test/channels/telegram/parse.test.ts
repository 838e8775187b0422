import { describe, expect, it } from "vitest";
import type { InboundEnvelope } from "../../../functions/core/envelope.ts";
import {
  telegramAccount,
  telegramChannelSchema,
} from "../../../functions/channels/telegram/config.ts";
import { parseTelegramUpdate } from "../../../functions/channels/telegram/parse.ts";

const account = telegramAccount(
  telegramChannelSchema.parse({ botUsername: "@Claw_Bot" }),
  "default",
);
const BOT_ID = "555000111";
const bytes = (value: unknown) =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));
const parse = (update: unknown) =>
  parseTelegramUpdate(bytes(update), { account, botId: BOT_ID, receivedAt: 1 });
function one(update: unknown): InboundEnvelope {
  const result = parse(update);
  if (result.kind !== "envelopes" || result.envelopes.length !== 1)
    throw new Error(`no envelope: ${JSON.stringify(result)}`);
  return result.envelopes[0]!;
}
function dropped(update: unknown): string {
  const result = parse(update);
  if (result.kind !== "envelopes" || result.envelopes.length)
    throw new Error(`not dropped: ${JSON.stringify(result)}`);
  return result.dropped?.[0] ?? "";
}

const ada = { id: 42, is_bot: false, first_name: "Ada", last_name: "L", username: "ada" };
const dm = { id: 42, type: "private", first_name: "Ada" };
const forum = { id: -1001234567890, type: "supergroup", title: "Forum", is_forum: true };
const group = { id: -1009, type: "supergroup", title: "Plain" };
const msg = (fields: Record<string, unknown>) => ({
  message_id: 7,
  date: 1700000000,
  from: ada,
  chat: dm,
  text: "hi",
  ...fields,
});

describe("channels.telegram config", () => {
  it("accepts numeric ids and tg: prefixes in allowlists, as telegram: entries", () => {
    const parsed = telegramChannelSchema.parse({
      allowFrom: [123, "tg:456", "telegram:789"],
      groupAllowFrom: ["TG:1"],
      accounts: { biz: { allowFrom: ["tg:2"] } },
    });
    expect(parsed.allowFrom).toEqual(["123", "telegram:456", "telegram:789"]);
    expect(parsed.groupAllowFrom).toEqual(["telegram:1"]);
    expect(parsed.accounts?.biz?.allowFrom).toEqual(["telegram:2"]);
    expect(parsed).toMatchObject({
      webhookPath: "/telegram-webhook",
      textChunkLimit: 4000,
      dmPolicy: "pairing",
      groupPolicy: "allowlist",
      streaming: { mode: "progress" },
      replyToMode: "off",
      mediaMaxMb: 100,
    });
    expect(() => telegramChannelSchema.parse({ textChunkLimit: 5000 })).toThrow();
  });
});

describe("Telegram update parsing", () => {
  it("turns a private message into a DM keyed by update_id per bot, with the chat/message alias", () => {
    const e = one({ update_id: 100, message: msg({}) });
    expect(e).toMatchObject({
      kind: "message",
      channel: "telegram",
      chatType: "direct",
      peerId: "42",
      senderId: "42",
      senderName: "Ada L",
      messageId: "7",
      text: "hi",
      dedupKey: `telegram:bot${BOT_ID}:42:7`,
      wasMentioned: false,
    });
    // One key row per message: the message's id decides retries and replays alone.
    expect(e.aliasKeys).toBeUndefined();
    expect(e.route).toMatchObject({
      channel: "telegram",
      to: "42",
      replyToMessageId: "7",
      extra: { chatType: "direct", senderId: "42" },
    });
  });

  it("puts a forum topic message in the topic's session and replies in that topic", () => {
    const e = one({
      update_id: 101,
      message: msg({
        chat: forum,
        message_thread_id: 3,
        is_topic_message: true,
        text: "@claw_bot status?",
        entities: [{ type: "mention", offset: 0, length: 9 }],
      }),
    });
    expect(e).toMatchObject({
      chatType: "group",
      peerId: "-1001234567890",
      threadId: "3",
      parentPeerId: "-1001234567890",
      wasMentioned: true,
      text: "status?",
    });
    expect(e.route).toMatchObject({ to: "-1001234567890", threadId: "3", extra: { forum: "1" } });
  });

  it("places a forum's General topic (no thread id) in topic 1", () => {
    const e = one({ update_id: 102, message: msg({ chat: forum, text: "hello" }) });
    expect(e).toMatchObject({ threadId: "1", wasMentioned: false });
  });

  it("keeps a reply chain in an ordinary supergroup in the group's session", () => {
    const e = one({ update_id: 103, message: msg({ chat: group, message_thread_id: 55 }) });
    expect(e.threadId).toBeUndefined();
    expect(e.peerId).toBe("-1009");
  });

  it("counts a reply to one of the bot's messages, a text_mention and /cmd@botname as mentions", () => {
    expect(
      one({
        update_id: 104,
        message: msg({
          chat: group,
          reply_to_message: {
            message_id: 1,
            from: { id: Number(BOT_ID), is_bot: true, first_name: "Claw" },
            text: "earlier",
          },
        }),
      }).wasMentioned,
    ).toBe(true);
    expect(
      one({
        update_id: 105,
        message: msg({
          chat: group,
          text: "Claw look",
          entities: [
            {
              type: "text_mention",
              offset: 0,
              length: 4,
              user: { id: Number(BOT_ID), is_bot: true, first_name: "Claw" },
            },
          ],
        }),
      }).wasMentioned,
    ).toBe(true);
    const command = one({
      update_id: 106,
      message: msg({
        chat: group,
        text: "/status@Claw_Bot",
        entities: [{ type: "bot_command", offset: 0, length: 16 }],
      }),
    });
    expect(command).toMatchObject({ wasMentioned: true, text: "/status" });
  });

  it("does not count a mention of another user, nor a reply to the topic's creation message", () => {
    expect(
      one({
        update_id: 107,
        message: msg({
          chat: group,
          text: "@claw_bot_fan hi",
          entities: [{ type: "mention", offset: 0, length: 13 }],
        }),
      }).wasMentioned,
    ).toBe(false);
    const inTopic = msg({
      chat: forum,
      message_thread_id: 9,
      is_topic_message: true,
      reply_to_message: {
        message_id: 9,
        from: { id: Number(BOT_ID), is_bot: true, first_name: "Claw" },
        forum_topic_created: { name: "t" },
      },
    });
    expect(one({ update_id: 108, message: inTopic }).wasMentioned).toBe(false);
  });

  it("drops a command addressed to another bot in a group", () => {
    expect(
      dropped({ update_id: 109, message: msg({ chat: group, text: "/start@other_bot" }) }),
    ).toMatch(/another bot/);
  });

  it("turns an edit into a system event that names the editor", () => {
    const e = one({
      update_id: 110,
      edited_message: msg({ text: "changed", edit_date: 1700000100 }),
    });
    expect(e).toMatchObject({
      kind: "system",
      senderId: "42",
      chatType: "direct",
      dedupKey: `telegram:bot${BOT_ID}:u110`,
    });
    expect(e.text).toContain("edited by Ada L: changed");
  });

  it("turns a button click into a system event and hands its id to the ack", () => {
    const result = parse({
      update_id: 111,
      callback_query: {
        id: "cbq-1",
        from: ada,
        chat_instance: "x",
        data: "yes",
        message: { message_id: 5, date: 0, chat: dm },
      },
    });
    expect(result).toMatchObject({ kind: "envelopes", ackHint: "cbq-1" });
    const e = (result as { envelopes: InboundEnvelope[] }).envelopes[0]!;
    expect(e).toMatchObject({
      kind: "system",
      senderId: "42",
      peerId: "42",
      dedupKey: `telegram:bot${BOT_ID}:cb:cbq-1`,
    });
    expect(e.aliasKeys).toBeUndefined();
    expect(e.text).toContain("callback_data: yes");
  });

  it("still answers a click on an inline message it cannot place", () => {
    expect(
      parse({
        update_id: 112,
        callback_query: {
          id: "cbq-2",
          from: ada,
          chat_instance: "x",
          data: "y",
          inline_message_id: "i",
        },
      }),
    ).toMatchObject({ kind: "envelopes", envelopes: [], ackHint: "cbq-2" });
  });

  it("describes photos and documents as attachments by file_id, without a link when over the size bound", () => {
    const small = telegramAccount(telegramChannelSchema.parse({ mediaMaxMb: 1 }), "default");
    const result = parseTelegramUpdate(
      bytes({
        update_id: 113,
        message: msg({
          text: undefined,
          caption: "look",
          photo: [
            { file_id: "p-small", file_size: 10 },
            { file_id: "p-big", file_size: 900 },
          ],
          document: {
            file_id: "d1",
            file_name: "notes.txt",
            mime_type: "text/plain",
            file_size: 5_000_000,
          },
        }),
      }),
      { account: small, botId: BOT_ID, receivedAt: 1 },
    );
    const e = (result as { envelopes: InboundEnvelope[] }).envelopes[0]!;
    expect(e.text).toBe("look");
    expect(e.attachments).toEqual([
      { name: "photo.jpg", mimeType: "image/jpeg", sizeBytes: 900, url: "telegram-file:p-big" },
      { name: "notes.txt", mimeType: "text/plain", sizeBytes: 5_000_000 },
    ]);
  });

  it("drops channel posts and update kinds it does not handle, and its own messages", () => {
    expect(
      dropped({
        update_id: 114,
        channel_post: { message_id: 1, date: 0, chat: { id: -100, type: "channel" }, text: "x" },
      }),
    ).toMatch(/channel_post/);
    expect(dropped({ update_id: 115, my_chat_member: {} })).toMatch(/my_chat_member/);
    expect(
      dropped({
        update_id: 116,
        message: msg({ from: { id: Number(BOT_ID), is_bot: true, first_name: "Claw" } }),
      }),
    ).toBe("own message");
  });

  it("calls a body malformed when it is not JSON, not an Update, or has a broken message", () => {
    expect(parse("{nope")).toMatchObject({ kind: "malformed" });
    expect(parse({ message: msg({}) })).toMatchObject({ kind: "malformed" });
    expect(parse({ update_id: 117, message: { text: "no chat" } })).toMatchObject({
      kind: "malformed",
    });
    expect(
      parseTelegramUpdate(new Uint8Array([0xff, 0xfe]), { account, receivedAt: 1 }),
    ).toMatchObject({ kind: "malformed" });
  });

  it("keys dedup by account when the bot token (and so its id) is unknown", () => {
    const result = parseTelegramUpdate(bytes({ update_id: 118, message: msg({}) }), {
      account,
      receivedAt: 1,
    });
    expect((result as { envelopes: InboundEnvelope[] }).envelopes[0]!.dedupKey).toBe(
      "telegram:acct:default:42:7",
    );
  });
});
