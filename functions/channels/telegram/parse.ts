import type { ParseResult } from "../channel.ts";
import {
  checkedEnvelope,
  clip,
  type ChatType,
  type InboundAttachment,
  type InboundEnvelope,
} from "../../core/envelope.ts";
import { normalizedBotUsername, type TelegramAccount } from "./config.ts";
import {
  telegramCallbackQuerySchema,
  telegramMessageSchema,
  telegramUpdateSchema,
  type TelegramCallbackQuery,
  type TelegramChat,
  type TelegramEntity,
  type TelegramMessage,
  type TelegramUser,
} from "./payloads.ts";
import { parseJsonBody } from "../parse-json-body.ts";

/**
 * One verified webhook body (a Bot API `Update`) → at most one envelope. Pure: no Bot API call.
 *
 * - `message` → a message; `edited_message` and `callback_query` (a button click) → system events,
 *   which pass the same access checks and never start a run by themselves (routing/access.ts, triage).
 *   Channel posts, member updates and the rest are acknowledged and dropped.
 * - Dedup per bot (the id in the token, else the account). A message's key is `<chat>:<message_id>`
 *   and a button click's `cb:<query id>`: Telegram's retries carry the same update, and a
 *   re-registered webhook replaying its queue the same message under another `update_id`, so the
 *   message's own id decides both and is the one key row stored (it was the alias of a key on
 *   `update_id` before, which rows stored then still answer to). An edit keeps `u<update_id>`: each
 *   edit of one message is an event of its own.
 * - Private chats are DMs (`peerId` = the user); groups and supergroups are groups; in a forum
 *   supergroup every message belongs to a topic (`message_thread_id`, the General topic is 1), which
 *   becomes the envelope's thread: sessions `…:group:<chat>:topic:<id>`.
 * - Mentions: a `mention` entity naming `botUsername`, a `text_mention` of the bot's id, a
 *   `/command@botname`, or a reply to one of the bot's messages (`implicitMentions.replyToBot`).
 * - Photos, documents, voice, audio, video and stickers become attachments by `file_id`
 *   (`telegram-file:<file_id>`), downloaded later through getFile (files.ts), never here.
 */

export const TELEGRAM_FILE_URL_PREFIX = "telegram-file:";
/** The Bot API's getFile serves files up to 20 MB. */
export const TELEGRAM_GETFILE_MAX_BYTES = 20 * 1024 * 1024;

export interface TelegramParseContext {
  account: TelegramAccount;
  /** The bot's own user id (from its token), when the token is configured. */
  botId?: string;
  receivedAt: number;
}

export function parseTelegramUpdate(raw: Uint8Array, ctx: TelegramParseContext): ParseResult {
  const read = parseJsonBody(raw, telegramUpdateSchema, "a Telegram Update");
  if (!read.ok) return { kind: "malformed", reason: read.reason };
  const update = read.value;
  const { update_id: updateId } = update;
  const botKey = ctx.botId ? `bot${ctx.botId}` : `acct:${ctx.account.accountId}`;
  const base = { botKey, updateId, ctx };

  if (update.message !== undefined) {
    const message = telegramMessageSchema.safeParse(update.message);
    if (!message.success) return { kind: "malformed", reason: "message: not a Telegram Message" };
    return result(fromMessage(message.data, base));
  }
  if (update.edited_message !== undefined) {
    const message = telegramMessageSchema.safeParse(update.edited_message);
    if (!message.success)
      return { kind: "malformed", reason: "edited_message: not a Telegram Message" };
    return result(fromEdit(message.data, base));
  }
  if (update.callback_query !== undefined) {
    const query = telegramCallbackQuerySchema.safeParse(update.callback_query);
    if (!query.success)
      return { kind: "malformed", reason: "callback_query: not a Telegram CallbackQuery" };
    const parsed = fromCallbackQuery(query.data, base);
    // The click is answered in the webhook response itself (answerCallbackQuery), so the user's
    // button stops spinning without an API call on the ack path; also when the click is dropped.
    return "dropped" in parsed
      ? { kind: "envelopes", envelopes: [], dropped: [parsed.dropped], ackHint: query.data.id }
      : { kind: "envelopes", envelopes: [parsed.envelope], ackHint: query.data.id };
  }
  const kinds = Object.keys(update).filter((key) => key !== "update_id");
  return {
    kind: "envelopes",
    envelopes: [],
    dropped: [`update kind ${kinds[0] ?? "(none)"} is not handled`],
  };
}

type Parsed = { envelope: InboundEnvelope } | { dropped: string };
interface Base {
  botKey: string;
  updateId: number;
  ctx: TelegramParseContext;
}

function result(parsed: Parsed): ParseResult {
  return "dropped" in parsed
    ? { kind: "envelopes", envelopes: [], dropped: [parsed.dropped] }
    : { kind: "envelopes", envelopes: [parsed.envelope] };
}

/** Where a message sits: chat type, session peer, topic (forums) and the thread replies go to. */
interface Place {
  chatType: ChatType;
  peerId: string;
  /** Session thread: forum topics only (DM threads stay in the DM's session). */
  topicId?: string;
  /** `message_thread_id` replies carry (forum topic, or a DM thread). */
  replyThreadId?: string;
  isForum: boolean;
}

function placeOf(
  chat: TelegramChat,
  threadId: number | undefined,
  isTopicMessage: boolean | undefined,
): Place | undefined {
  if (chat.type === "channel") return undefined;
  if (chat.type === "private")
    return {
      chatType: "direct",
      peerId: String(chat.id),
      replyThreadId: threadId ? String(threadId) : undefined,
      isForum: false,
    };
  const isForum = chat.is_forum === true;
  // In a forum every message is in a topic; messages of the General topic carry no thread id.
  const topic = isForum ? (isTopicMessage && threadId ? String(threadId) : "1") : undefined;
  return {
    chatType: "group",
    peerId: String(chat.id),
    topicId: topic,
    replyThreadId: topic,
    isForum,
  };
}

function fromMessage(message: TelegramMessage, base: Base): Parsed {
  const { ctx } = base;
  const place = placeOf(message.chat, message.message_thread_id, message.is_topic_message);
  if (!place) return { dropped: "channel posts are not handled" };
  const sender = senderOf(message.from, message.sender_chat);
  if (!sender) return { dropped: "message without a sender" };
  if (ctx.botId && sender.id === ctx.botId) return { dropped: "own message" };
  const text = message.text ?? message.caption ?? "";
  const entities = message.text !== undefined ? message.entities : message.caption_entities;
  const username = normalizedBotUsername(ctx.account);
  const command = /^\/[A-Za-z0-9_]{1,32}@([A-Za-z0-9_]+)/.exec(text);
  if (
    command &&
    place.chatType !== "direct" &&
    username &&
    command[1]!.toLowerCase() !== username
  ) {
    return { dropped: "a command addressed to another bot" };
  }
  const nativeMention = mentionsBot(text, entities, username, ctx.botId);
  const reply = message.reply_to_message;
  const replyToBot =
    ctx.account.implicitMentions.replyToBot !== false &&
    ctx.botId !== undefined &&
    reply?.from?.id !== undefined &&
    String(reply.from.id) === ctx.botId &&
    reply.forum_topic_created === undefined;
  const wasMentioned = nativeMention || replyToBot;
  const attachments = attachmentsOf(message, ctx.account);

  return checkedEnvelope({
    dedupKey: `telegram:${base.botKey}:${message.chat.id}:${message.message_id}`,
    kind: "message",
    channel: "telegram",
    accountId: ctx.account.accountId,
    chatType: place.chatType,
    peerId: place.peerId,
    parentPeerId: place.topicId ? place.peerId : undefined,
    threadId: place.chatType === "direct" ? place.replyThreadId : place.topicId,
    senderId: sender.id,
    senderName: sender.name,
    senderIsBot: sender.isBot || undefined,
    messageId: String(message.message_id),
    text: stripBotMention(text, username),
    attachments: attachments.length ? attachments : undefined,
    wasMentioned,
    receivedAt: ctx.receivedAt,
    route: routeFor(
      ctx.account,
      place,
      message.chat.id,
      message.message_id,
      sender.id,
      wasMentioned,
    ),
  });
}

function fromEdit(message: TelegramMessage, base: Base): Parsed {
  const { ctx } = base;
  const place = placeOf(message.chat, message.message_thread_id, message.is_topic_message);
  if (!place) return { dropped: "channel post edits are not handled" };
  const sender = senderOf(message.from, message.sender_chat);
  if (!sender) return { dropped: "edit without a sender" };
  if (ctx.botId && sender.id === ctx.botId) return { dropped: "edit of our own message" };
  const text = clip(message.text ?? message.caption ?? "", 2000);
  return system(
    base,
    place,
    message.chat.id,
    sender,
    `Telegram message ${message.message_id} edited by ${sender.name ?? sender.id}: ${text}`,
    message.message_id,
  );
}

function fromCallbackQuery(query: TelegramCallbackQuery, base: Base): Parsed {
  const chat = query.message?.chat;
  if (!chat) return { dropped: "button click on an inline message (no chat)" };
  const place = placeOf(chat, query.message?.message_thread_id, query.message?.is_topic_message);
  if (!place) return { dropped: "button click in a channel" };
  const sender = senderOf(query.from, undefined)!;
  const what =
    query.data !== undefined
      ? `callback_data: ${clip(query.data, 256)}`
      : `game: ${clip(query.game_short_name ?? "?", 64)}`;
  return system(
    base,
    place,
    chat.id,
    sender,
    `Telegram button clicked by ${sender.name ?? sender.id} on message ${query.message?.message_id ?? "?"} (${what})`,
    undefined,
    `cb:${query.id}`,
  );
}

function system(
  base: Base,
  place: Place,
  chatId: number,
  sender: Sender,
  text: string,
  messageId?: number,
  /** The event's own id where it has one (a click's `cb:<id>`); else its update's. */
  ownKey?: string,
): Parsed {
  const { ctx } = base;
  return checkedEnvelope({
    dedupKey: `telegram:${base.botKey}:${ownKey ?? `u${base.updateId}`}`,
    kind: "system",
    channel: "telegram",
    accountId: ctx.account.accountId,
    chatType: place.chatType,
    peerId: place.peerId,
    parentPeerId: place.topicId ? place.peerId : undefined,
    threadId: place.chatType === "direct" ? place.replyThreadId : place.topicId,
    senderId: sender.id,
    senderName: sender.name,
    senderIsBot: sender.isBot || undefined,
    messageId: messageId !== undefined ? String(messageId) : undefined,
    text,
    receivedAt: ctx.receivedAt,
    route: routeFor(ctx.account, place, chatId, undefined, sender.id, false),
  });
}

function routeFor(
  account: TelegramAccount,
  place: Place,
  chatId: number,
  messageId: number | undefined,
  senderId: string,
  mentioned: boolean,
) {
  return {
    channel: "telegram",
    accountId: account.accountId,
    to: String(chatId),
    threadId: place.replyThreadId,
    replyToMessageId: messageId !== undefined ? String(messageId) : undefined,
    extra: {
      chatType: place.chatType,
      senderId,
      mentioned: mentioned ? "1" : "0",
      ...(place.isForum ? { forum: "1" } : {}),
    },
  };
}

interface Sender {
  id: string;
  name?: string;
  isBot: boolean;
}

function senderOf(
  from: TelegramUser | undefined,
  senderChat: TelegramChat | undefined,
): Sender | undefined {
  if (from) {
    const name =
      [from.first_name, from.last_name].filter(Boolean).join(" ") ||
      (from.username ? `@${from.username}` : undefined);
    return { id: String(from.id), name: name || undefined, isBot: from.is_bot };
  }
  if (senderChat) return { id: String(senderChat.id), name: senderChat.title, isBot: false };
  return undefined;
}

function mentionsBot(
  text: string,
  entities: TelegramEntity[] | undefined,
  username: string | undefined,
  botId: string | undefined,
): boolean {
  for (const entity of entities ?? []) {
    // Entity offsets count UTF-16 code units, as JavaScript strings do.
    const span = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    if (entity.type === "mention" && username && span === `@${username}`) return true;
    if (entity.type === "text_mention" && botId && entity.user && String(entity.user.id) === botId)
      return true;
    if (entity.type === "bot_command" && username && span.endsWith(`@${username}`)) return true;
  }
  // Without entities (some clients, forwarded payloads) a written @botname still counts.
  return (
    username !== undefined &&
    new RegExp(`(^|[^\\w@])@${escapeRegex(username)}(?![\\w])`, "i").test(text)
  );
}

/** `@botname` is addressing, not content: removed (and `/cmd@botname` becomes `/cmd`). */
function stripBotMention(text: string, username: string | undefined): string {
  if (!username) return text;
  const stripped = text
    .replace(new RegExp(`^(/[A-Za-z0-9_]{1,32})@${escapeRegex(username)}\\b`, "i"), "$1")
    .replace(new RegExp(`(^|[^\\w@])@${escapeRegex(username)}(?![\\w])[,:]?\\s*`, "gi"), "$1")
    .trim();
  return stripped || text;
}

function attachmentsOf(message: TelegramMessage, account: TelegramAccount): InboundAttachment[] {
  const maxBytes = Math.min(account.mediaMaxMb * 1024 * 1024, TELEGRAM_GETFILE_MAX_BYTES);
  const out: InboundAttachment[] = [];
  const add = (
    file:
      | { file_id: string; file_size?: number; file_name?: string; mime_type?: string }
      | undefined,
    name: string,
    mimeType?: string,
  ) => {
    if (!file) return;
    const tooLarge = file.file_size !== undefined && file.file_size > maxBytes;
    out.push({
      name: file.file_name ?? name,
      mimeType: file.mime_type ?? mimeType,
      sizeBytes: file.file_size,
      // Over the bound there is no link: the file is described, never downloaded.
      ...(tooLarge ? {} : { url: `${TELEGRAM_FILE_URL_PREFIX}${file.file_id}` }),
    });
  };
  // Telegram sends each photo in several sizes; the largest is last.
  add(message.photo?.at(-1), "photo.jpg", "image/jpeg");
  add(message.document, "document");
  add(message.audio, "audio", "audio/mpeg");
  add(message.voice, "voice.ogg", "audio/ogg");
  add(message.video, "video.mp4", "video/mp4");
  add(message.video_note, "video-note.mp4", "video/mp4");
  if (message.sticker)
    add(
      message.sticker,
      `sticker${message.sticker.emoji ? ` ${message.sticker.emoji}` : ""}.webp`,
      "image/webp",
    );
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
