import type { ParseResult } from "../channel.ts";
import { checkedEnvelope, clip, type InboundEnvelope } from "../../core/envelope.ts";
import type { WhatsAppAccount } from "./config.ts";
import { isBroadcastJid, isGroupJid, personId, phoneOf, sameUser } from "./jid.ts";
import type { WaContent, WaKey, WaMedia, WhatsAppSocketPayload } from "./payloads.ts";

/**
 * One forwarded Baileys event → envelopes. Never calls WhatsApp.
 * - A message from someone else in a DM or a group is a message; dedup key
 *   `whatsapp:<account>:<remoteJid>:<key.id>`, the same for every redelivery (Baileys replays
 *   offline messages after a reconnect). Status, broadcast and newsletter chats are dropped.
 * - Mention (groups): the linked number or LID in `contextInfo.mentionedJid`, or a reply to one of
 *   the bot's messages (OpenClaw's implicit reply-to-bot); DMs need none.
 * - The device's own messages (`fromMe`) are dropped, except in the self chat with `selfChatMode`,
 *   where they are the owner's — but never the bot's replies, whose ids the connector derives with
 *   the `3EB0EC` prefix (BOT_MESSAGE_ID_PREFIX).
 * - Edits and deletes (`protocolMessage`) and reactions on the bot's messages are system events from
 *   that sender in that chat: the message's access decision, context for the next run only.
 * - Media is named (`<media:image>` with its caption, as OpenClaw writes it) with its type and size;
 *   its bytes stay on WhatsApp (end-to-end encrypted, only the companion could fetch them).
 */

/** The prefix of every message id the connector sends with (companion/message-id.ts). */
export const BOT_MESSAGE_ID_PREFIX = "3EB0EC";

export type WhatsAppParseInput = WhatsAppSocketPayload & {
  account: WhatsAppAccount;
  receivedAt: number;
};

interface Chat {
  chatType: "direct" | "group";
  /** The chat's JID as Baileys sends to it. */
  jid: string;
  peerId: string;
  senderJid: string;
  senderId: string;
}

export function parseWhatsAppEvent(input: WhatsAppParseInput): ParseResult {
  if (input.type === "reaction") return result(reaction(input));
  const { key } = input.message;
  if (isBroadcastJid(key.remoteJid)) return dropped("a status, broadcast or newsletter message");
  const chat = chatOf(input, key);
  if ("dropped" in chat) return dropped(chat.dropped);
  const content = unwrap(input.message.message);
  if (!content) return dropped("a message without content");
  const protocol = content.protocolMessage;
  if (protocol) return result(protocolEvent(input, chat, protocol));
  if (content.reactionMessage)
    return dropped("a reaction inside messages.upsert (served from messages.reaction)");
  return result(message(input, chat, content));
}

/** Who speaks where: the chat's JID, the session's peer and the sender (E.164 when known). */
function chatOf(input: WhatsAppParseInput, key: WaKey): Chat | { dropped: string } {
  const { account, self } = input;
  const group = isGroupJid(key.remoteJid);
  const senderJid = group ? (key.participant ?? "") : key.remoteJid;
  const senderAlt = group ? key.participantAlt : key.remoteJidAlt;
  if (key.fromMe) {
    const selfChat =
      !group && (sameUser(key.remoteJid, self.id) || sameUser(key.remoteJid, self.lid));
    if (!(selfChat && account.selfChatMode)) return { dropped: "the linked device's own message" };
    if (key.id.startsWith(BOT_MESSAGE_ID_PREFIX)) return { dropped: "the bot's own reply" };
    const owner = phoneOf(self.id) ?? personId(self.id, undefined)!;
    return {
      chatType: "direct",
      jid: key.remoteJid,
      peerId: owner,
      senderJid: self.id,
      senderId: owner,
    };
  }
  const senderId = personId(senderJid, senderAlt);
  if (!senderId) return { dropped: "a message without a sender" };
  return {
    chatType: group ? "group" : "direct",
    jid: key.remoteJid,
    peerId: group ? key.remoteJid : senderId,
    senderJid,
    senderId,
  };
}

type MessageInput = Extract<WhatsAppParseInput, { type: "message" }>;

function message(
  input: MessageInput,
  chat: Chat,
  content: WaContent,
): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, self } = input;
  const { key, pushName } = input.message;
  const body = textOf(content);
  if (body === undefined) return { dropped: "a message kind edgeclaw does not read" };
  const context = content.extendedTextMessage?.contextInfo ?? mediaOf(content)?.media.contextInfo;
  const mentioned =
    (context?.mentionedJid ?? []).some((jid) => isSelf(jid, self)) ||
    (context?.participant ? isSelf(context.participant, self) : false);
  const text = chat.chatType === "group" && mentioned ? withoutSelfMention(body, self) : body;
  const media = mediaOf(content);
  const size = Number(media?.media.fileLength);
  return checkedEnvelope({
    dedupKey: dedupKey(account, key.remoteJid, key.id),
    kind: "message",
    channel: "whatsapp",
    accountId: account.accountId,
    chatType: chat.chatType,
    peerId: chat.peerId,
    senderId: chat.senderId,
    senderName: pushName ? clip(pushName, 120) : undefined,
    messageId: key.id,
    text,
    attachments: media
      ? [
          {
            name: media.media.fileName ?? `WhatsApp ${media.kind}`,
            mimeType: media.media.mimetype ?? undefined,
            sizeBytes: Number.isSafeInteger(size) && size >= 0 ? size : undefined,
          },
        ]
      : undefined,
    wasMentioned: mentioned,
    receivedAt: input.receivedAt,
    route: route(input, chat, key.id),
  });
}

/** MESSAGE_EDIT (14) and REVOKE (0) as system events; other protocol messages (key shares, history) are not events. */
function protocolEvent(
  input: WhatsAppParseInput,
  chat: Chat,
  protocol: NonNullable<WaContent["protocolMessage"]>,
): { envelope: InboundEnvelope } | { dropped: string } {
  const target = protocol.key?.id;
  const type = protocol.type;
  if ((type === 14 || type === "MESSAGE_EDIT") && target) {
    const edited = protocol.editedMessage ? (textOf(protocol.editedMessage) ?? "") : "";
    return systemEvent(
      input,
      chat,
      `WhatsApp message ${target} edited by ${chat.senderId}: ${clip(edited, 2000)}`,
    );
  }
  if ((type === 0 || type === "REVOKE") && target)
    return systemEvent(input, chat, `WhatsApp message ${target} deleted by ${chat.senderId}`);
  return { dropped: "a protocol message that is no edit or delete" };
}

function reaction(
  input: Extract<WhatsAppParseInput, { type: "reaction" }>,
): { envelope: InboundEnvelope } | { dropped: string } {
  const reactionKey = input.reaction.key;
  if (!reactionKey) return { dropped: "a reaction without its own key" };
  if (isBroadcastJid(input.key.remoteJid))
    return { dropped: "a reaction in a status or broadcast" };
  if (!input.key.fromMe) return { dropped: "a reaction on a message the bot did not send" };
  const chat = chatOf(input, {
    ...reactionKey,
    remoteJid: reactionKey.remoteJid || input.key.remoteJid,
  });
  if ("dropped" in chat) return chat;
  const emoji = input.reaction.text;
  return systemEvent(
    input,
    chat,
    emoji
      ? `WhatsApp reaction ${clip(emoji, 16)} by ${chat.senderId} on ${input.key.id}`
      : `WhatsApp reaction removed by ${chat.senderId} from ${input.key.id}`,
    reactionKey.id,
  );
}

function systemEvent(
  input: WhatsAppParseInput,
  chat: Chat,
  text: string,
  eventKeyId?: string,
): { envelope: InboundEnvelope } | { dropped: string } {
  const id = eventKeyId ?? (input.type === "message" ? input.message.key.id : "");
  return checkedEnvelope({
    dedupKey: dedupKey(input.account, chat.jid, id),
    kind: "system",
    channel: "whatsapp",
    accountId: input.account.accountId,
    chatType: chat.chatType,
    peerId: chat.peerId,
    senderId: chat.senderId,
    messageId: id,
    text,
    receivedAt: input.receivedAt,
    route: route(input, chat, undefined),
  });
}

export function dedupKey(account: WhatsAppAccount, remoteJid: string, id: string): string {
  return `whatsapp:${account.accountId}:${remoteJid}:${id}`;
}

function route(input: WhatsAppParseInput, chat: Chat, messageId: string | undefined) {
  return {
    channel: "whatsapp",
    accountId: input.account.accountId,
    to: chat.jid,
    replyToMessageId: messageId,
    // What a quote and a read receipt need beside the chat: the author of the message in a group.
    extra: {
      direct: chat.chatType === "direct" ? "1" : "0",
      ...(chat.chatType === "group" ? { participant: chat.senderJid } : {}),
    },
  };
}

/** Disappearing and view-once messages carry the real content one level down. */
function unwrap(content: WaContent | null | undefined): WaContent | undefined {
  if (!content) return undefined;
  const inner = content.ephemeralMessage?.message ?? content.viewOnceMessage?.message;
  return inner ? unwrap(inner as WaContent) : content;
}

type MediaKind = "image" | "video" | "audio" | "document" | "sticker";

function mediaOf(content: WaContent): { kind: MediaKind; media: WaMedia } | undefined {
  if (content.imageMessage) return { kind: "image", media: content.imageMessage };
  if (content.videoMessage) return { kind: "video", media: content.videoMessage };
  if (content.audioMessage) return { kind: "audio", media: content.audioMessage };
  if (content.documentMessage) return { kind: "document", media: content.documentMessage };
  if (content.stickerMessage) return { kind: "sticker", media: content.stickerMessage };
  return undefined;
}

/** The text the model reads: the body, a media placeholder with its caption, or a location's coordinates. */
function textOf(content: Partial<WaContent>): string | undefined {
  const plain = content.conversation ?? content.extendedTextMessage?.text;
  if (plain) return plain;
  const media = mediaOf(content as WaContent);
  if (media) {
    const caption = media.media.caption?.trim();
    return caption ? `<media:${media.kind}> ${caption}` : `<media:${media.kind}>`;
  }
  const location = content.locationMessage;
  if (location && typeof location.degreesLatitude === "number")
    return `[location ${location.degreesLatitude}, ${location.degreesLongitude ?? "?"}${location.name ? ` ${clip(location.name, 200)}` : ""}]`;
  return undefined;
}

function isSelf(jid: string, self: { id: string; lid?: string }): boolean {
  return sameUser(jid, self.id) || sameUser(jid, self.lid);
}

/** `@15551234567 what now?` → `what now?` (WhatsApp writes a mention as @ and the number or LID user). */
function withoutSelfMention(body: string, self: { id: string; lid?: string }): string {
  const users = [self.id, self.lid]
    .filter((jid): jid is string => Boolean(jid))
    .map((jid) => jid.split("@")[0]!.split(":")[0]!);
  let text = body;
  for (const user of users) text = text.split(`@${user}`).join("");
  const stripped = text
    .replace(/^[\s:,]+/, "")
    .replace(/\s{2,}/g, " ")
    .trim();
  return stripped || body.trim();
}

function dropped(reason: string): ParseResult {
  return { kind: "envelopes", envelopes: [], dropped: [reason] };
}

function result(parsed: { envelope: InboundEnvelope } | { dropped: string }): ParseResult {
  return "dropped" in parsed
    ? dropped(parsed.dropped)
    : { kind: "envelopes", envelopes: [parsed.envelope] };
}
