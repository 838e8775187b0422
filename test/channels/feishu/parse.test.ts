import { describe, expect, it } from "vitest";
import type { ParseResult } from "../../../functions/channels/channel.ts";
import type { InboundEnvelope } from "../../../functions/core/envelope.ts";
import { feishuAccount, feishuChannelSchema } from "../../../functions/channels/feishu/config.ts";
import { parseFeishuBody } from "../../../functions/channels/feishu/parse.ts";

/**
 * The parser on its own, on bodies shaped as Feishu documents them (im.message.receive_v1 with
 * post, image and file content; im.chat.member.bot.added_v1 / deleted_v1; reactions and read
 * receipts): what the agent reads, which attachments it may fetch, and what is not kept.
 */

const BOT = "ou_bot_parse_000000000000000000000";
const account = feishuAccount(
  feishuChannelSchema.parse({ connectionMode: "webhook", domain: "lark" }),
  "default",
);
const ctx = { account, botOpenId: BOT, receivedAt: 1_700_000_000_000 };

function event(
  eventType: string,
  body: Record<string, unknown>,
  eventId = `ev_${Math.random().toString(36).slice(2)}`,
) {
  return {
    schema: "2.0",
    header: {
      event_id: eventId,
      event_type: eventType,
      create_time: "1700000000000",
      token: "t",
      app_id: "cli_parse",
      tenant_key: "tk",
    },
    event: body,
  };
}

function message(
  type: string,
  content: unknown,
  extra: Record<string, unknown> = {},
  mentions: unknown[] = [],
) {
  return event("im.message.receive_v1", {
    sender: { sender_id: { open_id: "ou_alice" }, sender_type: "user", tenant_key: "tk" },
    message: {
      message_id: "om_m1",
      chat_id: "oc_c1",
      chat_type: "group",
      message_type: type,
      content: JSON.stringify(content),
      mentions,
      ...extra,
    },
  });
}

function only(result: ParseResult): InboundEnvelope {
  expect(result.kind).toBe("envelopes");
  const envelopes = (result as Extract<ParseResult, { kind: "envelopes" }>).envelopes;
  expect(envelopes).toHaveLength(1);
  return envelopes[0]!;
}

function dropped(result: ParseResult): string[] {
  expect(result.kind).toBe("envelopes");
  const list = result as Extract<ParseResult, { kind: "envelopes" }>;
  expect(list.envelopes).toEqual([]);
  return list.dropped ?? [];
}

describe("Feishu parse", () => {
  it("reads a post (rich text): title, paragraphs, the bot's @ removed, other @s as names, links with their URL, images and code noted", () => {
    const post = {
      title: "Weekly report",
      content: [
        [
          { tag: "at", user_id: "@_user_1", user_name: "edgeclaw" },
          { tag: "text", text: " please check " },
          { tag: "a", text: "the doc", href: "https://example.feishu.cn/docx/abc" },
          { tag: "text", text: " with " },
          { tag: "at", user_id: "@_user_2" },
        ],
        [
          { tag: "img", image_key: "img_v2_123" },
          { tag: "emotion", emoji_type: "SMILE" },
        ],
        [{ tag: "code_block", language: "PYTHON", text: "print(1)" }],
        [{ tag: "a", href: "https://bare.example.com" }],
      ],
    };
    const mentions = [
      { key: "@_user_1", id: { open_id: BOT }, name: "edgeclaw" },
      { key: "@_user_2", id: { open_id: "ou_bob" }, name: "Bob" },
    ];
    const envelope = only(parseFeishuBody(message("post", post, {}, mentions), ctx));
    expect(envelope.text).toBe(
      "Weekly report\nplease check the doc (https://example.feishu.cn/docx/abc) with @Bob\n[image]\n\n```python\nprint(1)\n```\n\nhttps://bare.example.com",
    );
    expect(envelope.wasMentioned).toBe(true);
    expect(envelope.chatType).toBe("group");
    expect(envelope.peerId).toBe("oc_c1");
    expect(envelope.route).toMatchObject({ to: "oc_c1", replyToMessageId: "om_m1" });
  });

  it("keys a message by its message_id alone, whatever event id carries it (one key row)", () => {
    const first = only(parseFeishuBody(message("text", { text: "hi" }), ctx));
    const again = only(parseFeishuBody(message("text", { text: "hi" }), ctx));
    expect(first.dedupKey).toBe("feishu:cli_parse:message:om_m1");
    expect(again.dedupKey).toBe(first.dedupKey);
    expect(first.aliasKeys).toBeUndefined();
  });

  it("reads a post keyed by locale, and an @all in a post is not a bot mention", () => {
    const post = {
      en_us: {
        title: "",
        content: [
          [
            { tag: "at", user_id: "@_all", user_name: "Everyone" },
            { tag: "text", text: " standup in 5" },
          ],
        ],
      },
    };
    const envelope = only(
      parseFeishuBody(message("post", post, {}, [{ key: "@_all", id: {}, name: "Everyone" }]), ctx),
    );
    expect(envelope.text).toBe("@Everyone standup in 5");
    expect(envelope.wasMentioned).toBe(false);
  });

  it("turns an image message into an attachment fetched by message id and image key on the account's domain", () => {
    const envelope = only(parseFeishuBody(message("image", { image_key: "img_v3_abc" }), ctx));
    expect(envelope.text).toBe("[image]");
    expect(envelope.attachments).toEqual([
      {
        name: "image img_v3_abc",
        mimeType: "image/*",
        url: "https://open.larksuite.com/open-apis/im/v1/messages/om_m1/resources/img_v3_abc?type=image",
      },
    ]);
  });

  it("turns a file message into a named attachment (type=file); a file without a key is dropped", () => {
    const envelope = only(
      parseFeishuBody(message("file", { file_key: "file_v3_xyz", file_name: "notes.md" }), ctx),
    );
    expect(envelope.text).toBe("[file: notes.md]");
    expect(envelope.attachments).toEqual([
      {
        name: "notes.md",
        url: "https://open.larksuite.com/open-apis/im/v1/messages/om_m1/resources/file_v3_xyz?type=file",
      },
    ]);
    expect(dropped(parseFeishuBody(message("file", { file_name: "x" }), ctx))[0]).toMatch(
      /unsupported message type file/,
    );
  });

  it("makes bot added / removed system events for the group, named after the operator, never messages", () => {
    for (const [type, verb] of [
      ["im.chat.member.bot.added_v1", "added the bot to"],
      ["im.chat.member.bot.deleted_v1", "removed the bot from"],
    ] as const) {
      const envelope = only(
        parseFeishuBody(
          event(
            type,
            {
              chat_id: "oc_team",
              operator_id: { open_id: "ou_admin" },
              name: "Team",
              external: false,
            },
            `ev_${type}`,
          ),
          ctx,
        ),
      );
      expect(envelope.kind).toBe("system");
      expect(envelope.chatType).toBe("group");
      expect(envelope.peerId).toBe("oc_team");
      expect(envelope.senderId).toBe("ou_admin");
      expect(envelope.text).toBe(`Feishu: ou_admin ${verb} this group`);
      expect(envelope.dedupKey).toBe(`feishu:cli_parse:ev_${type}`);
    }
    expect(
      dropped(
        parseFeishuBody(
          event("im.chat.member.bot.added_v1", { operator_id: { open_id: "ou_admin" } }),
          ctx,
        ),
      )[0],
    ).toMatch(/malformed/);
  });

  it("keeps no reaction, read receipt, or other event kind", () => {
    const kinds = {
      "im.message.reaction.created_v1": {
        message_id: "om_m1",
        reaction_type: { emoji_type: "THUMBSUP" },
        operator_type: "user",
        user_id: { open_id: "ou_mallory" },
      },
      "im.message.message_read_v1": {
        reader: { reader_id: { open_id: "ou_mallory" }, read_time: "1" },
        message_id_list: ["om_m1"],
      },
      "im.chat.member.user.added_v1": {
        chat_id: "oc_c1",
        users: [{ user_id: { open_id: "ou_mallory" } }],
      },
      "vc.bot.meeting_invited_v1": { meeting: { id: "m1" }, operator: { open_id: "ou_mallory" } },
    };
    for (const [type, body] of Object.entries(kinds))
      expect(dropped(parseFeishuBody(event(type, body), ctx))).toEqual([
        `event ${type} is not handled`,
      ]);
  });

  it("drops the bot's own message, and flags another app's", () => {
    const own = message("text", { text: "hi" });
    (own.event.sender as Record<string, unknown>).sender_id = { open_id: BOT };
    expect(dropped(parseFeishuBody(own, ctx))).toEqual(["the bot's own message"]);
    const other = message("text", { text: "hi" });
    (other.event.sender as Record<string, unknown>).sender_type = "app";
    expect(only(parseFeishuBody(other, ctx)).senderIsBot).toBe(true);
  });
});
