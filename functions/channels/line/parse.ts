import {
  checkedEnvelope,
  clip,
  type ChatType,
  type InboundEnvelope,
  type InboundEnvelopeInput,
} from "../../core/envelope.ts";
import { withTrailingSlash, type LineAccount } from "./config.ts";
import {
  lineEventBaseSchema,
  lineFollowEventSchema,
  lineMembersEventSchema,
  lineMessageEventSchema,
  linePostbackEventSchema,
  lineUnsendEventSchema,
  lineWebhookBodySchema,
  type LineEventBase,
  type LineMessage,
  type LineSource,
} from "./payloads.ts";
import { firstIssue, parseJsonBody } from "../parse-json-body.ts";

/**
 * A verified LINE webhook body → envelopes, one per event (a request may carry several).
 *
 * - Dedup key: a message event's `message.id` (OpenClaw dedups messages by it), any other event's
 *   `webhookEventId`. A redelivery keeps both (`deliveryContext.isRedelivery`), and one message
 *   under another event id is still the same message, so the message's id decides every duplicate
 *   case alone and is the one key row stored (it was the alias of the event id's key before, which
 *   rows stored then still answer to).
 * - An event whose signed `timestamp` is older than `eventMaxAgeSeconds` (24 h) is dropped: past the
 *   48 h dedup record a replayed request would otherwise be new again.
 * - `mode: "standby"` events belong to another module that holds chat control: acknowledged, not kept.
 * - Messages (text, image, video, audio, file, location, sticker) are `kind: "message"`; follow,
 *   unfollow, join, leave, memberJoined, memberLeft, unsend and postback are `kind: "system"`: they
 *   pass the same access checks as a message from that sender and only ever become context.
 * - 1:1 chats are direct (peer = the user); groups and multi-person rooms are groups (peer = the
 *   group or room id). A mention of the bot is LINE's own flag, `mention.mentionees[].isSelf`.
 * - The reply token travels in `route.extra` with the time it was issued, so the sender can tell
 *   whether it is still worth trying; a redelivered event's token is left out (its age is unknown).
 */

export type LineBody =
  | { kind: "events"; destination: string; events: Array<Record<string, unknown>> }
  | { kind: "malformed"; reason: string };

export function parseLineBody(raw: Uint8Array): LineBody {
  const body = parseJsonBody(raw, lineWebhookBodySchema, "a LINE webhook body");
  if (!body.ok) return { kind: "malformed", reason: body.reason };
  return { kind: "events", destination: body.value.destination, events: body.value.events };
}

export interface LineParseContext {
  account: LineAccount;
  /** The bot's user id (`destination` of the body). */
  destination: string;
  receivedAt: number;
}

export type LineEventResult = { envelope: InboundEnvelope } | { dropped: string };

export function envelopeFromLineEvent(
  raw: Record<string, unknown>,
  ctx: LineParseContext,
): LineEventResult {
  const base = lineEventBaseSchema.safeParse(raw);
  if (!base.success) return { dropped: `malformed event: ${firstIssue(base.error)}` };
  const event = base.data;
  if (event.mode === "standby")
    return { dropped: `${event.type} in standby mode (another module has chat control)` };
  if (!event.source) return { dropped: `${event.type} without a source` };
  const ageSeconds = Math.floor((ctx.receivedAt - event.timestamp) / 1000);
  if (ageSeconds > ctx.account.eventMaxAgeSeconds)
    return {
      dropped: `${event.type} event signed ${ageSeconds} s ago, older than channels.line.eventMaxAgeSeconds (${ctx.account.eventMaxAgeSeconds})`,
    };
  switch (event.type) {
    case "message": {
      const parsed = lineMessageEventSchema.safeParse(raw);
      return parsed.success
        ? fromMessage(event, parsed.data.message, ctx)
        : { dropped: `malformed message event: ${firstIssue(parsed.error)}` };
    }
    case "follow": {
      const parsed = lineFollowEventSchema.safeParse(raw);
      const unblocked = parsed.success && parsed.data.follow?.isUnblocked;
      return system(
        event,
        ctx,
        (who) => `LINE: ${who} ${unblocked ? "unblocked the bot" : "added the bot as a friend"}`,
      );
    }
    case "unfollow":
      return system(event, ctx, (who) => `LINE: ${who} blocked the bot`);
    case "join":
      return system(
        event,
        ctx,
        () => `LINE: the bot joined this ${conversationNoun(event.source!)}`,
      );
    case "leave":
      return system(
        event,
        ctx,
        () => `LINE: the bot left (or was removed from) this ${conversationNoun(event.source!)}`,
      );
    case "memberJoined":
    case "memberLeft": {
      const parsed = lineMembersEventSchema.safeParse(raw);
      const members =
        (parsed.success
          ? (event.type === "memberJoined" ? parsed.data.joined : parsed.data.left)?.members
          : undefined) ?? [];
      const ids = members.map((m) => m.userId).filter((id): id is string => !!id);
      const verb = event.type === "memberJoined" ? "joined" : "left";
      return system(
        event,
        ctx,
        () =>
          `LINE: ${ids.length ? ids.slice(0, 20).join(", ") : "someone"} ${verb} this ${conversationNoun(event.source!)}`,
        ids[0],
      );
    }
    case "unsend": {
      const parsed = lineUnsendEventSchema.safeParse(raw);
      if (!parsed.success) return { dropped: "malformed unsend event" };
      return system(
        event,
        ctx,
        (who) => `LINE: ${who} unsent message ${parsed.data.unsend.messageId}`,
      );
    }
    case "postback": {
      const parsed = linePostbackEventSchema.safeParse(raw);
      if (!parsed.success) return { dropped: "malformed postback event" };
      const params = parsed.data.postback.params
        ? ` params=${clip(JSON.stringify(parsed.data.postback.params), 300)}`
        : "";
      return system(
        event,
        ctx,
        (who) => `LINE postback from ${who}: data=${clip(parsed.data.postback.data, 500)}${params}`,
      );
    }
    default:
      return { dropped: `unsupported event type ${event.type}` };
  }
}

function fromMessage(
  event: LineEventBase,
  message: LineMessage,
  ctx: LineParseContext,
): LineEventResult {
  const at = conversation(event.source!);
  if (!at.senderId)
    return { dropped: "message without a sender (LINE leaves userId out for some clients)" };
  const mentioned =
    message.mention?.mentionees.some((m) => m.type === "user" && m.isSelf === true) ?? false;
  const content = describeMessage(message, ctx.account);
  if (!content) return { dropped: `unsupported message type ${message.type}` };
  return checkedEnvelope({
    dedupKey: `line:${ctx.destination}:message:${message.id}`,
    kind: "message",
    channel: "line",
    accountId: ctx.account.accountId,
    chatType: at.chatType,
    peerId: at.peerId,
    senderId: at.senderId,
    messageId: message.id,
    text: content.text,
    attachments: content.attachments,
    wasMentioned: mentioned,
    receivedAt: ctx.receivedAt,
    route: route(event, ctx, at, { messageId: message.id, mentioned }),
  });
}

/** What the model reads for one message: its text (bot mention removed) or a description, plus attachments. */
function describeMessage(
  message: LineMessage,
  account: LineAccount,
): { text: string; attachments?: InboundEnvelopeInput["attachments"] } | undefined {
  const contentUrl = `${withTrailingSlash(account.dataApiBaseUrl)}v2/bot/message/${encodeURIComponent(message.id)}/content`;
  const maxBytes = account.mediaMaxMb * 1024 * 1024;
  // Only content LINE holds can be downloaded; an `external` provider's URL is the sender's, not LINE's.
  const onLine = message.contentProvider === undefined || message.contentProvider.type === "line";
  switch (message.type) {
    case "text":
      return { text: stripSelfMentions(message) };
    case "image":
    case "video":
    case "audio": {
      const seconds =
        message.duration !== undefined ? `, ${Math.round(message.duration / 1000)} s` : "";
      return {
        text: `[${message.type}${seconds}]`,
        attachments: [
          {
            name: `${message.type} (LINE message ${message.id})`,
            mimeType: `${message.type}/*`,
            url: onLine ? contentUrl : undefined,
          },
        ],
      };
    }
    case "file": {
      const tooLarge = message.fileSize !== undefined && message.fileSize > maxBytes;
      return {
        text: `[file: ${message.fileName ?? "unnamed"}]`,
        attachments: [
          {
            name: `${message.fileName ?? "file"}${tooLarge ? ` (over mediaMaxMb ${account.mediaMaxMb})` : ""}`,
            sizeBytes: message.fileSize,
            url: tooLarge ? undefined : contentUrl,
          },
        ],
      };
    }
    case "location": {
      const place = [message.title, message.address].filter(Boolean).join(", ");
      return {
        text: `[location${place ? `: ${place}` : ""} (${message.latitude ?? "?"}, ${message.longitude ?? "?"})]`,
      };
    }
    case "sticker": {
      const words = message.keywords?.length ? `: ${message.keywords.slice(0, 5).join(", ")}` : "";
      return { text: `[sticker${words}]${message.text ? ` ${message.text}` : ""}` };
    }
    default:
      return undefined;
  }
}

/** `@Bot hello` → `hello`: the spans LINE marks `isSelf` are cut out (indexes are UTF-16 offsets). */
function stripSelfMentions(message: LineMessage): string {
  const text = message.text ?? "";
  const spans = (message.mention?.mentionees ?? [])
    .filter((m) => m.isSelf === true)
    .sort((a, b) => b.index - a.index);
  let out = text;
  for (const span of spans) {
    if (span.index + span.length > out.length) continue;
    out = out.slice(0, span.index) + out.slice(span.index + span.length);
  }
  return out.replace(/\s{2,}/g, " ").trim() || text.trim();
}

function system(
  event: LineEventBase,
  ctx: LineParseContext,
  describe: (who: string) => string,
  actor?: string,
): LineEventResult {
  const at = conversation(event.source!);
  const sender = at.senderId ?? actor;
  // A DM event names its user; without one there is nobody to check access for.
  if (at.chatType === "direct" && !sender) return { dropped: `${event.type} without a user` };
  return checkedEnvelope({
    dedupKey: eventKey(ctx, event),
    kind: "system",
    channel: "line",
    accountId: ctx.account.accountId,
    chatType: at.chatType,
    peerId: at.peerId,
    senderId: sender ?? "line",
    text: describe(sender ?? "someone"),
    receivedAt: ctx.receivedAt,
    route: route(event, ctx, at, { mentioned: false }),
  });
}

interface Conversation {
  chatType: ChatType;
  peerId: string;
  senderId?: string;
  sourceType: LineSource["type"];
}

function conversation(source: LineSource): Conversation {
  switch (source.type) {
    case "user":
      return {
        chatType: "direct",
        peerId: source.userId ?? "unknown",
        senderId: source.userId,
        sourceType: "user",
      };
    case "group":
      return {
        chatType: "group",
        peerId: source.groupId,
        senderId: source.userId,
        sourceType: "group",
      };
    case "room":
      return {
        chatType: "group",
        peerId: source.roomId,
        senderId: source.userId,
        sourceType: "room",
      };
  }
}

function conversationNoun(source: LineSource): string {
  return source.type === "room" ? "multi-person chat" : source.type === "group" ? "group" : "chat";
}

function route(
  event: LineEventBase,
  ctx: LineParseContext,
  at: Conversation,
  extra: { messageId?: string; mentioned: boolean },
): InboundEnvelopeInput["route"] {
  const redelivered = event.deliveryContext?.isRedelivery === true;
  // The token's clock starts when LINE issued it: the earlier of the event time and our receipt.
  const issuedAt = Math.min(ctx.receivedAt, event.timestamp || ctx.receivedAt);
  return {
    channel: "line",
    accountId: ctx.account.accountId,
    to: at.peerId,
    ...(extra.messageId ? { replyToMessageId: extra.messageId } : {}),
    extra: {
      chatType: at.chatType,
      sourceType: at.sourceType,
      mentioned: extra.mentioned ? "1" : "0",
      ...(at.senderId ? { senderId: at.senderId } : {}),
      ...(event.replyToken && !redelivered
        ? { replyToken: event.replyToken, replyTokenAt: String(issuedAt) }
        : {}),
    },
  };
}

function eventKey(ctx: LineParseContext, event: LineEventBase): string {
  return `line:${ctx.destination}:${event.webhookEventId}`;
}
