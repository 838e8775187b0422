import type { ParseResult } from "../channel.ts";
import { checkedEnvelope, clip, type InboundEnvelope } from "../../core/envelope.ts";
import { threadRepliesFor, type MatrixAccount } from "./config.ts";
import type { MatrixContent, MatrixSocketPayload } from "./payloads.ts";

/**
 * One forwarded Matrix room event → envelopes. Never calls the homeserver.
 * - `m.room.message` from someone else is a message (`m.notice` is what bots send: senderIsBot);
 *   mention = `m.mentions.user_ids` naming the bot, a matrix.to link to it in `formatted_body`, or
 *   its user id in the body; DMs need none. Threads are `m.relates_to` rel_type `m.thread` (its
 *   `event_id` is the root); `threadReplies` decides whether a thread is its own session and where
 *   the reply goes. Dedup key: the event id.
 * - An edit (`m.replace`) and a reaction (`m.reaction`, rel_type `m.annotation`) are system events
 *   from that sender in that room — the message's access decision, context for the next run only.
 *   Reactions follow `reactionNotifications`: "own" keeps those on the bot's own messages.
 * - `m.room.encrypted` is not served (the companion does not forward it; one that arrives is dropped).
 */

export type MatrixParseInput = MatrixSocketPayload & {
  account: MatrixAccount;
  receivedAt: number;
};

export function parseMatrixEvent(input: MatrixParseInput): ParseResult {
  const { event, self } = input;
  if (event.sender === self.userId) return dropped("the bot's own event");
  switch (event.type) {
    case "m.room.message": {
      const relation = event.content["m.relates_to"];
      if (relation?.rel_type === "m.replace") return result(edit(input));
      return result(message(input));
    }
    case "m.reaction":
      return result(reaction(input));
    case "m.room.encrypted":
      return dropped("an end-to-end encrypted event (encrypted rooms are not served)");
    default:
      return dropped(`event ${event.type.slice(0, 60)} is not handled`);
  }
}

/** Where an event from `sender` in the room belongs: DM peer (per user or per room) or the room. */
function conversation(input: MatrixParseInput) {
  const { account, roomId, event } = input;
  const direct = input.direct;
  const perRoom = account.dm?.sessionScope === "per-room";
  return {
    chatType: direct ? ("direct" as const) : ("group" as const),
    peerId: direct && !perRoom ? event.sender : roomId,
  };
}

function message(input: MatrixParseInput): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, roomId, event, self } = input;
  const content = event.content;
  const msgtype = content.msgtype ?? "";
  const body = withoutReplyFallback(content);
  const attachment = ["m.image", "m.file", "m.audio", "m.video"].includes(msgtype);
  if (!body && !attachment) return { dropped: "a message without a body" };
  const { chatType, peerId } = conversation(input);
  const direct = chatType === "direct";

  const mentioned = mentionsBot(content, self.userId);
  const text = mentioned ? withoutLeadingMention(body, self.userId) : body;
  const relation = content["m.relates_to"];
  const threadRoot = relation?.rel_type === "m.thread" ? relation.event_id : undefined;
  const mode = threadRepliesFor(account, direct);
  // "off": thread messages stay in the room's session and replies are top level; "inbound": a
  // thread is its own session and replies stay in it; "always": a trigger opens a thread too.
  const threadId =
    mode === "off"
      ? undefined
      : (threadRoot ?? (mode === "always" && (direct || mentioned) ? event.event_id : undefined));

  return checkedEnvelope({
    dedupKey: `matrix:${account.accountId}:${event.event_id}`,
    kind: "message",
    channel: "matrix",
    accountId: account.accountId,
    chatType,
    peerId,
    parentPeerId: threadId && !direct ? roomId : undefined,
    threadId: direct ? undefined : threadId,
    senderId: event.sender,
    senderIsBot: msgtype === "m.notice" || undefined,
    messageId: event.event_id,
    text: msgtype === "m.emote" ? `* ${event.sender} ${text}` : text,
    attachments: attachment
      ? [
          {
            name: `Matrix ${msgtype.slice(2)} ${clip(content.body ?? "", 200)}`.trim(),
            mimeType: content.info?.mimetype,
            sizeBytes:
              typeof content.info?.size === "number" && Number.isInteger(content.info.size)
                ? content.info.size
                : undefined,
          },
        ]
      : undefined,
    wasMentioned: mentioned,
    receivedAt: input.receivedAt,
    route: {
      channel: "matrix",
      accountId: account.accountId,
      to: roomId,
      threadId,
      replyToMessageId: event.event_id,
      extra: { direct: direct ? "1" : "0", botUserId: self.userId },
    },
  });
}

function edit(input: MatrixParseInput): { envelope: InboundEnvelope } | { dropped: string } {
  const { event } = input;
  const edited = event.content["m.relates_to"]?.event_id;
  if (!edited) return { dropped: "an edit without the event it replaces" };
  const text = event.content["m.new_content"]?.body ?? event.content.body ?? "";
  return systemEvent(input, {
    text: `Matrix message ${edited} edited by ${event.sender}: ${clip(text, 2000)}`,
  });
}

function reaction(input: MatrixParseInput): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, event, self } = input;
  const relation = event.content["m.relates_to"];
  if (relation?.rel_type !== "m.annotation" || !relation.event_id || !relation.key)
    return { dropped: "a reaction without its annotation" };
  if (account.reactionNotifications === "off") return { dropped: "reactionNotifications is off" };
  if (input.targetSender !== self.userId)
    return { dropped: "a reaction on a message the bot did not send (reactionNotifications own)" };
  return systemEvent(input, {
    text: `Matrix reaction ${clip(relation.key, 32)} by ${event.sender} on ${relation.event_id}`,
  });
}

function systemEvent(
  input: MatrixParseInput,
  at: { text: string },
): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, roomId, event, self } = input;
  const { chatType, peerId } = conversation(input);
  return checkedEnvelope({
    dedupKey: `matrix:${account.accountId}:${event.event_id}`,
    kind: "system",
    channel: "matrix",
    accountId: account.accountId,
    chatType,
    peerId,
    senderId: event.sender,
    messageId: event.event_id,
    text: at.text,
    receivedAt: input.receivedAt,
    route: {
      channel: "matrix",
      accountId: account.accountId,
      to: roomId,
      extra: { direct: chatType === "direct" ? "1" : "0", botUserId: self.userId },
    },
  });
}

/** The bot is mentioned: intentional mentions (`m.mentions`), a pill linking to it, or its user id in the body. */
export function mentionsBot(content: MatrixContent, botUserId: string): boolean {
  if (content["m.mentions"]?.user_ids?.includes(botUserId)) return true;
  const html = content.formatted_body ?? "";
  if (
    html.includes(`matrix.to/#/${botUserId}`) ||
    html.includes(`matrix.to/#/${encodeURIComponent(botUserId)}`)
  )
    return true;
  return (content.body ?? "").includes(botUserId);
}

/** `@bot:server: hello` → `hello` (the user id a client puts first when it addresses the bot). */
function withoutLeadingMention(body: string, botUserId: string): string {
  const stripped = body
    .split(botUserId)
    .join("")
    .replace(/^[\s:,]+/, "")
    .replace(/\s{2,}/g, " ")
    .trim();
  return stripped || body.trim();
}

/**
 * The body without the quoted fallback a reply carries (`> <@alice:server> original` lines and the
 * blank line after them), which older clients add and the model must not take for the user's words.
 */
function withoutReplyFallback(content: MatrixContent): string {
  const body = content.body ?? "";
  if (!content["m.relates_to"]?.["m.in_reply_to"] || !body.startsWith("> ")) return body;
  const lines = body.split("\n");
  let index = 0;
  while (index < lines.length && lines[index]!.startsWith(">")) index += 1;
  if (lines[index] === "") index += 1;
  return lines.slice(index).join("\n") || body;
}

function dropped(reason: string): ParseResult {
  return { kind: "envelopes", envelopes: [], dropped: [reason] };
}

function result(parsed: { envelope: InboundEnvelope } | { dropped: string }): ParseResult {
  return "dropped" in parsed
    ? dropped(parsed.dropped)
    : { kind: "envelopes", envelopes: [parsed.envelope] };
}
