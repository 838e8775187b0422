import type { ParseResult } from "../channel.ts";
import { checkedEnvelope, clip, type InboundEnvelope } from "../../core/envelope.ts";
import type { SignalAccount } from "./config.ts";
import { senderOf } from "./identity.ts";
import type { SignalDataMessage, SignalSocketPayload } from "./payloads.ts";

/**
 * One forwarded signal-cli envelope → envelopes. Never calls signal-cli.
 * - A `dataMessage` with text or attachments is a message: in a group when it carries
 *   `groupInfo.groupId` (the session is the group), else a DM with its sender. The sender is its
 *   E.164 number, or `uuid:<uuid>` for a sender whose number is hidden — the ids `allowFrom` and
 *   pairing use. Mentioned: a native mention (`mentions[]`) naming the bot's number or uuid, or a
 *   quote of one of the bot's messages. Dedup key: the sender and the message's timestamp, which
 *   is what names a Signal message (signal-cli hands a message again after a crash with both).
 * - A reaction (`dataMessage.reaction`) and an edit (`editMessage`) are system events from that
 *   sender in that conversation — the message's access decision, context for the next run only.
 *   Reactions follow `reactionNotifications` (own: on the bot's messages; allowlist: from
 *   `reactionAllowlist`). Remote deletes, receipts, typing and sync messages are not events here.
 */

export type SignalParseInput = SignalSocketPayload & { account: SignalAccount; receivedAt: number };

export function parseSignalEnvelope(input: SignalParseInput): ParseResult {
  const { envelope, self } = input;
  const sender = senderOf(envelope);
  if (!sender) return dropped("an envelope without a sender");
  if (isSelf(self, envelope.sourceNumber, envelope.sourceUuid))
    return dropped("the bot's own message");
  if (envelope.editMessage) return result(edit(input, sender));
  const data = envelope.dataMessage;
  if (!data) return dropped("an envelope without a data message (receipt, typing or sync)");
  if (data.reaction) return result(reaction(input, sender, data));
  if (data.remoteDelete) return dropped("a remote delete");
  return result(message(input, sender, data));
}

function isSelf(
  self: SignalSocketPayload["self"],
  number?: string | null,
  uuid?: string | null,
): boolean {
  return (!!number && number === self.number) || (!!uuid && !!self.uuid && uuid === self.uuid);
}

function conversation(sender: string, data: SignalDataMessage | undefined) {
  const groupId = data?.groupInfo?.groupId;
  return groupId
    ? { chatType: "group" as const, peerId: groupId, to: `group:${groupId}` }
    : { chatType: "direct" as const, peerId: sender, to: sender };
}

function message(
  input: SignalParseInput,
  sender: string,
  data: SignalDataMessage,
): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, envelope, self } = input;
  const attachments = account.ignoreAttachments ? [] : (data.attachments ?? []);
  const text = withMentions(data, self);
  if (!text.text && attachments.length === 0)
    return { dropped: "a message without text or attachments" };
  const place = conversation(sender, data);
  const quotesBot = !!data.quote && isSelf(self, data.quote.authorNumber, data.quote.authorUuid);
  return checkedEnvelope({
    dedupKey: `signal:${account.accountId}:${sender}:${data.timestamp}`,
    kind: "message",
    channel: "signal",
    accountId: account.accountId,
    chatType: place.chatType,
    peerId: place.peerId,
    senderId: sender,
    senderName: envelope.sourceName ? clip(envelope.sourceName, 200) : undefined,
    messageId: String(data.timestamp),
    text: text.text,
    attachments: attachments.length
      ? attachments.map((attachment) => ({
          name: attachment.filename ?? `Signal attachment ${attachment.id ?? ""}`.trim(),
          mimeType: attachment.contentType ?? undefined,
          sizeBytes: attachment.size ?? undefined,
          text: attachment.id ? input.attachmentText[attachment.id] : undefined,
        }))
      : undefined,
    wasMentioned: text.mentioned || quotesBot,
    receivedAt: input.receivedAt,
    route: route(input, sender, place.to, data.timestamp, place.chatType === "group"),
  });
}

function edit(
  input: SignalParseInput,
  sender: string,
): { envelope: InboundEnvelope } | { dropped: string } {
  const edit = input.envelope.editMessage!;
  const text = withMentions(edit.dataMessage, input.self).text;
  return systemEvent(input, sender, edit.dataMessage, {
    timestamp: edit.dataMessage.timestamp,
    text: `Signal message ${edit.targetSentTimestamp} edited by ${sender}: ${clip(text, 2000)}`,
  });
}

function reaction(
  input: SignalParseInput,
  sender: string,
  data: SignalDataMessage,
): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, self } = input;
  const reacted = data.reaction!;
  const mode = account.reactionNotifications;
  if (mode === "off") return { dropped: "reactionNotifications is off" };
  if (mode === "own" && !isSelf(self, reacted.targetAuthorNumber, reacted.targetAuthorUuid))
    return { dropped: "a reaction on a message the bot did not send (reactionNotifications own)" };
  if (mode === "allowlist" && !account.reactionAllowlist.includes(sender))
    return { dropped: "a reaction from a sender not in reactionAllowlist" };
  const verb = reacted.isRemove ? "removed reaction" : "reaction";
  return systemEvent(input, sender, data, {
    timestamp: data.timestamp,
    text: `Signal ${verb} ${clip(reacted.emoji, 32)} by ${sender} on message ${reacted.targetSentTimestamp}`,
  });
}

function systemEvent(
  input: SignalParseInput,
  sender: string,
  data: SignalDataMessage,
  at: { timestamp: number; text: string },
): { envelope: InboundEnvelope } | { dropped: string } {
  const { account } = input;
  const place = conversation(sender, data);
  return checkedEnvelope({
    dedupKey: `signal:${account.accountId}:${sender}:${at.timestamp}`,
    kind: "system",
    channel: "signal",
    accountId: account.accountId,
    chatType: place.chatType,
    peerId: place.peerId,
    senderId: sender,
    messageId: String(at.timestamp),
    text: at.text,
    receivedAt: input.receivedAt,
    route: route(input, sender, place.to, at.timestamp, place.chatType === "group"),
  });
}

/** Where the reply goes, and what a quote, a reaction or a read receipt needs to name the trigger. */
function route(
  input: SignalParseInput,
  sender: string,
  to: string,
  timestamp: number,
  group: boolean,
) {
  return {
    channel: "signal",
    accountId: input.account.accountId,
    to,
    replyToMessageId: String(timestamp),
    extra: { author: sender, group: group ? "1" : "0" },
  };
}

/**
 * The text with each mention placeholder (signal-cli puts U+FFFC where a mention stands) written
 * out: the bot's own mentions are taken out, others become `@<number or uuid>`.
 */
function withMentions(
  data: SignalDataMessage,
  self: SignalSocketPayload["self"],
): { text: string; mentioned: boolean } {
  const raw = data.message ?? "";
  const mentions = [...(data.mentions ?? [])].sort((a, b) => b.start - a.start);
  let text = raw;
  let mentioned = false;
  for (const mention of mentions) {
    const bot = isSelf(self, mention.number, mention.uuid);
    mentioned ||= bot;
    const name = bot ? "" : `@${mention.number ?? mention.uuid ?? "someone"}`;
    if (mention.start > text.length) continue;
    text = text.slice(0, mention.start) + name + text.slice(mention.start + mention.length);
  }
  return { text: (mentions.length ? text.replace(/[ \t]{2,}/g, " ") : text).trim(), mentioned };
}

function dropped(reason: string): ParseResult {
  return { kind: "envelopes", envelopes: [], dropped: [reason] };
}

function result(parsed: { envelope: InboundEnvelope } | { dropped: string }): ParseResult {
  return "dropped" in parsed
    ? dropped(parsed.dropped)
    : { kind: "envelopes", envelopes: [parsed.envelope] };
}
