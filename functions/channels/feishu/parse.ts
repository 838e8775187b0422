import {
  checkedEnvelope,
  type InboundEnvelope,
  type InboundEnvelopeInput,
} from "../../core/envelope.ts";
import type { ParseResult } from "../channel.ts";
import { feishuApiBase, type FeishuAccount } from "./config.ts";
import {
  botMembershipSchema,
  eventEnvelopeSchema,
  fileContentSchema,
  imageContentSchema,
  messageReceiveSchema,
  postBodySchema,
  textContentSchema,
  type FeishuMention,
  type FeishuMessageEvent,
  type FeishuPostElement,
} from "./payloads.ts";
import { firstIssue } from "../parse-json-body.ts";

/**
 * A verified, decrypted Feishu body → a handshake answer or envelopes.
 *
 * - `url_verification` → 200 `{"challenge": …}` (the token was checked by verify).
 * - Schema 2.0 events, deduplicated by `header.event_id` (Feishu keeps it across its retries at
 *   15 s, 5 min, 1 h, 6 h), a message by its `message_id`: a retry carries the same message, and
 *   the same message under another event id is still one, so the message's id decides every
 *   duplicate case alone and is the one key row stored (it was the alias of the event id's key
 *   before, which rows stored then still answer to).
 * - `im.message.receive_v1`: p2p chats are direct (peer = the sender's open_id, replies go to the
 *   chat_id), group chats are groups (peer = chat_id). A bot mention is `mentions[].id.open_id`
 *   equal to the bot's open_id (`botOpenId`); `@_all` is not one. Text, post (rich text → plain
 *   text), image and file (attachments downloaded later by message_id + key), others described.
 *   Another app's message is flagged `senderIsBot`; the bot's own is dropped.
 * - `im.chat.member.bot.added_v1` / `deleted_v1` → system events (context only, never a run), under
 *   the same access checks as a message from the operator who added or removed the bot.
 * - Everything else (message_read, reactions, schema 1.0 callbacks) is acknowledged and not kept.
 */

export interface FeishuParseContext {
  account: FeishuAccount;
  botOpenId?: string;
  receivedAt: number;
}

export function parseFeishuBody(
  body: Record<string, unknown>,
  ctx: FeishuParseContext,
): ParseResult {
  if (body.type === "url_verification") {
    if (typeof body.challenge !== "string" || body.challenge.length > 512)
      return { kind: "malformed", reason: "url_verification without a challenge" };
    return { kind: "respond", response: Response.json({ challenge: body.challenge }) };
  }
  if (body.schema === undefined && (body.uuid !== undefined || body.type === "event_callback")) {
    return {
      kind: "envelopes",
      envelopes: [],
      dropped: ["event schema 1.0 is not handled; subscribe with schema 2.0"],
    };
  }
  const parsed = eventEnvelopeSchema.safeParse(body);
  if (!parsed.success) return { kind: "malformed", reason: firstIssue(parsed.error) };
  const { header, event } = parsed.data;
  const eventKey = `feishu:${header.app_id ?? ctx.account.accountId}:${header.event_id}`;
  const result = envelopeFor(
    header.event_type,
    event,
    eventKey,
    header.app_id ?? ctx.account.accountId,
    ctx,
  );
  return "envelope" in result
    ? { kind: "envelopes", envelopes: [result.envelope] }
    : { kind: "envelopes", envelopes: [], dropped: [result.dropped] };
}

type EventResult = { envelope: InboundEnvelope } | { dropped: string };

function envelopeFor(
  type: string,
  event: Record<string, unknown>,
  dedupKey: string,
  appId: string,
  ctx: FeishuParseContext,
): EventResult {
  switch (type) {
    case "im.message.receive_v1": {
      const parsed = messageReceiveSchema.safeParse(event);
      return parsed.success
        ? fromMessage(parsed.data, appId, ctx)
        : { dropped: `malformed ${type}: ${firstIssue(parsed.error)}` };
    }
    case "im.chat.member.bot.added_v1":
    case "im.chat.member.bot.deleted_v1": {
      const parsed = botMembershipSchema.safeParse(event);
      if (!parsed.success) return { dropped: `malformed ${type}` };
      const operator = parsed.data.operator_id?.open_id;
      const verb = type.endsWith("added_v1") ? "added the bot to" : "removed the bot from";
      return checkedEnvelope({
        dedupKey,
        kind: "system",
        channel: "feishu",
        accountId: ctx.account.accountId,
        chatType: "group",
        peerId: parsed.data.chat_id,
        senderId: operator ?? "feishu",
        text: `Feishu: ${operator ?? "someone"} ${verb} this group`,
        receivedAt: ctx.receivedAt,
        route: {
          channel: "feishu",
          accountId: ctx.account.accountId,
          to: parsed.data.chat_id,
          extra: { chatType: "group" },
        },
      });
    }
    default:
      return { dropped: `event ${type} is not handled` };
  }
}

function fromMessage(
  data: FeishuMessageEvent,
  appId: string,
  ctx: FeishuParseContext,
): EventResult {
  const { sender, message } = data;
  const senderId = sender.sender_id?.open_id;
  if (!senderId) return { dropped: "message without a sender open_id" };
  if (ctx.botOpenId && senderId === ctx.botOpenId) return { dropped: "the bot's own message" };
  const direct = message.chat_type === "p2p";
  const mentions = message.mentions ?? [];
  const mentioned = !!ctx.botOpenId && mentions.some((m) => m.id?.open_id === ctx.botOpenId);
  const content = describeMessage(message, mentions, ctx);
  if (!content) return { dropped: `unsupported message type ${message.message_type}` };
  const inThread = !!message.thread_id;
  return checkedEnvelope({
    dedupKey: `feishu:${appId}:message:${message.message_id}`,
    kind: "message",
    channel: "feishu",
    accountId: ctx.account.accountId,
    chatType: direct ? "direct" : "group",
    peerId: direct ? senderId : message.chat_id,
    senderId,
    senderIsBot: sender.sender_type !== undefined && sender.sender_type !== "user",
    messageId: message.message_id,
    text: content.text,
    attachments: content.attachments,
    wasMentioned: mentioned,
    receivedAt: ctx.receivedAt,
    route: {
      channel: "feishu",
      accountId: ctx.account.accountId,
      to: message.chat_id,
      replyToMessageId: message.message_id,
      extra: { chatType: direct ? "direct" : "group", ...(inThread ? { inThread: "1" } : {}) },
    },
  });
}

interface Described {
  text: string;
  attachments?: InboundEnvelopeInput["attachments"];
}

function describeMessage(
  message: FeishuMessageEvent["message"],
  mentions: FeishuMention[],
  ctx: FeishuParseContext,
): Described | undefined {
  const content = jsonContent(message.content);
  const resource = (key: string, type: "image" | "file") =>
    `${feishuApiBase(ctx.account)}open-apis/im/v1/messages/${encodeURIComponent(message.message_id)}/resources/${encodeURIComponent(key)}?type=${type}`;
  switch (message.message_type) {
    case "text": {
      const parsed = textContentSchema.safeParse(content);
      return parsed.success
        ? { text: replaceMentions(parsed.data.text, mentions, ctx.botOpenId) }
        : undefined;
    }
    case "post": {
      const text = postToText(content, mentions, ctx.botOpenId);
      return text === undefined ? undefined : { text };
    }
    case "image": {
      const parsed = imageContentSchema.safeParse(content);
      if (!parsed.success) return undefined;
      return {
        text: "[image]",
        attachments: [
          {
            name: `image ${parsed.data.image_key}`,
            mimeType: "image/*",
            url: resource(parsed.data.image_key, "image"),
          },
        ],
      };
    }
    case "file": {
      const parsed = fileContentSchema.safeParse(content);
      if (!parsed.success) return undefined;
      const name = parsed.data.file_name ?? "file";
      return {
        text: `[file: ${name}]`,
        attachments: [{ name, url: resource(parsed.data.file_key, "file") }],
      };
    }
    case "audio":
    case "media":
    case "sticker":
      return { text: `[${message.message_type}]` };
    default:
      return undefined;
  }
}

/** `@_user_1 hi` → `hi` for the bot, `@Name` for anyone else (keys are Feishu's placeholders). */
function replaceMentions(
  text: string,
  mentions: FeishuMention[],
  botOpenId: string | undefined,
): string {
  let out = text;
  for (const mention of mentions) {
    const isBot = !!botOpenId && mention.id?.open_id === botOpenId;
    out = out.split(mention.key).join(isBot ? "" : `@${mention.name ?? "someone"}`);
  }
  return out.replace(/[ \t]{2,}/g, " ").trim() || text.trim();
}

/** Rich text → plain text: one line per paragraph; links as `text (url)`; @ as names; images noted. */
function postToText(
  content: unknown,
  mentions: FeishuMention[],
  botOpenId: string | undefined,
): string | undefined {
  let parsed = postBodySchema.safeParse(content);
  if (!parsed.success && typeof content === "object" && content !== null) {
    // Some deliveries key the post by locale.
    const first = Object.values(content as Record<string, unknown>).find(
      (value) => postBodySchema.safeParse(value).success,
    );
    parsed = postBodySchema.safeParse(first);
  }
  if (!parsed.success) return undefined;
  const lines = parsed.data.content.map((paragraph) => {
    const line = paragraph.map((element) => postElementText(element, mentions, botOpenId)).join("");
    // "@bot do this": the space after the removed mention goes with it.
    return paragraph[0] && isBotAt(paragraph[0], mentions, botOpenId) ? line.trimStart() : line;
  });
  const body = lines.join("\n").trim();
  const title = parsed.data.title?.trim();
  return [title, body].filter(Boolean).join("\n") || "[empty post]";
}

function postElementText(
  element: FeishuPostElement,
  mentions: FeishuMention[],
  botOpenId: string | undefined,
): string {
  switch (element.tag) {
    case "text":
    case "md":
      return element.text ?? "";
    case "a":
      return element.href && element.text && element.text !== element.href
        ? `${element.text} (${element.href})`
        : (element.href ?? element.text ?? "");
    case "at": {
      if (isBotAt(element, mentions, botOpenId)) return "";
      const mention = mentions.find(
        (m) => m.key === element.user_id || m.id?.open_id === element.user_id,
      );
      return `@${element.user_name ?? mention?.name ?? element.user_id ?? "someone"}`;
    }
    case "code_block":
      return `\n\`\`\`${element.language?.toLowerCase() ?? ""}\n${element.text ?? ""}\n\`\`\`\n`;
    case "img":
      return "[image]";
    case "media":
      return "[video]";
    case "emotion":
      return "";
    case "hr":
      return "\n---\n";
    default:
      return element.text ?? "";
  }
}

/**
 * A post's `at` names the mention by its placeholder key (`@_user_1`, resolved through `mentions`)
 * in received events, by open_id in posts the bot itself wrote.
 */
function isBotAt(
  element: FeishuPostElement,
  mentions: FeishuMention[],
  botOpenId: string | undefined,
): boolean {
  if (!botOpenId || element.tag !== "at" || !element.user_id) return false;
  if (element.user_id === botOpenId) return true;
  return mentions.some((m) => m.key === element.user_id && m.id?.open_id === botOpenId);
}

function jsonContent(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return undefined;
  }
}
