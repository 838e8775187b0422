import { checkedEnvelope, type InboundEnvelopeInput } from "../../core/envelope.ts";
import type { SlackAccount } from "./config.ts";
import {
  slackMessageEventSchema,
  slackReactionEventSchema,
  slackRoomEventSchema,
  type SlackEventCallback,
  type SlackMessageEvent,
  type SlackSlashCommand,
} from "./payloads.ts";
import {
  chatTypeOf,
  closedConversation,
  isOwnPost,
  type SlackParseContext,
  type SlackParseResult,
} from "./parse-context.ts";
import { fromEditOrDelete, fromReaction, fromRoomEvent } from "./system-events.ts";

/**
 * A classified Slack request (classify.ts) → the envelope the session runs on: an Events API
 * callback dispatched by event type (the system events are built in system-events.ts), a user's
 * message with its mention, thread and attachments, and a slash command.
 */

/** One Events API callback → one envelope, or the reason it is not one (self message, unsupported subtype, …). */
export function envelopeFromEvent(
  callback: SlackEventCallback,
  ctx: SlackParseContext,
): SlackParseResult {
  const type = callback.event.type;
  if (type === "message" || type === "app_mention") {
    const event = slackMessageEventSchema.safeParse(callback.event);
    return event.success
      ? fromMessage(callback, event.data, ctx)
      : { dropped: `malformed ${type} event` };
  }
  if (type === "reaction_added" || type === "reaction_removed") {
    const event = slackReactionEventSchema.safeParse(callback.event);
    return event.success
      ? fromReaction(callback, event.data, ctx)
      : { dropped: `malformed ${type} event` };
  }
  const room = slackRoomEventSchema.safeParse(callback.event);
  if (room.success) return fromRoomEvent(callback, room.data, ctx);
  return { dropped: `unsupported event type ${type}` };
}

const USER_MESSAGE_SUBTYPES = new Set([undefined, "file_share", "thread_broadcast"]);

function fromMessage(
  callback: SlackEventCallback,
  event: SlackMessageEvent,
  ctx: SlackParseContext,
): SlackParseResult {
  const { account, bot } = ctx;
  if (event.subtype === "message_changed" || event.subtype === "message_deleted")
    return fromEditOrDelete(callback, event, ctx);
  const fromBot = event.bot_id !== undefined || event.subtype === "bot_message";
  // Self-loop guard: never answer our own posts, whatever allowBots says.
  if (isOwnPost(event, bot)) return { dropped: "own message" };
  if (!fromBot && !USER_MESSAGE_SUBTYPES.has(event.subtype))
    return { dropped: `message subtype ${event.subtype} is not a user message` };
  if (!event.user && !fromBot) return { dropped: "message without a sender" };

  const chatType = chatTypeOf(event.channel, event.channel_type);
  const entry = chatType === "direct" ? undefined : account.channels?.[event.channel];
  if (fromBot && !(entry?.allowBots ?? account.allowBots))
    return { dropped: "bot message (allowBots is off)" };
  const closed = closedConversation(account, chatType, event.channel);
  if (closed) return { dropped: closed };

  const text = event.text;
  const threadTs = event.thread_ts && event.thread_ts !== event.ts ? event.thread_ts : undefined;
  const nativeMention =
    event.type === "app_mention" || (bot.userId !== undefined && mentionsUser(text, bot.userId));
  const replyToBot =
    account.implicitMentions.replyToBot &&
    bot.userId !== undefined &&
    threadTs !== undefined &&
    event.parent_user_id === bot.userId;
  const wasMentioned = nativeMention || replyToBot;
  // Without the bot's user id, the `message` copy of a post cannot tell a mention of the bot from
  // one of someone else. It is then placed as if it were a mention, exactly like its `app_mention`
  // twin, so both land in one session and collapse there (by their shared dedup key); the SessionDO
  // keeps the mention the twin carries (durable-objects/session/inbox/store.ts, insert).
  const mayMentionBot = wasMentioned || (bot.userId === undefined && /<@[UW][A-Z0-9]+/.test(text));
  if (
    chatType === "channel" &&
    !wasMentioned &&
    (entry?.ignoreOtherMentions ?? account.ignoreOtherMentions) &&
    /<@[UW][A-Z0-9]+|<!subteam\^/.test(text)
  ) {
    return { dropped: "mentions someone else, not the bot (ignoreOtherMentions)" };
  }
  const sender = event.user ?? event.bot_id!;
  const team = callback.team_id;
  // A mention that will open a visible thread starts that thread's session right away, so the root
  // and the replies that follow share one session (channels/slack, "threads, sessions").
  const replyMode =
    entry?.replyToMode ?? account.replyToModeByChatType?.[chatType] ?? account.replyToMode;
  const sessionThread =
    threadTs ??
    (chatType !== "direct" && mayMentionBot && replyMode !== "off" ? event.ts : undefined);

  return checkedEnvelope({
    ...slackMessageKeys(team, event.channel, event.ts, callback.event_id),
    kind: "message",
    channel: "slack",
    accountId: account.accountId,
    chatType,
    peerId: chatType === "direct" ? sender : event.channel,
    parentPeerId: sessionThread && chatType !== "direct" ? event.channel : undefined,
    threadId: sessionThread,
    teamId: team,
    senderId: sender,
    senderName: event.user_profile?.display_name || event.user_profile?.real_name || undefined,
    senderIsBot: fromBot || undefined,
    messageId: event.ts,
    text: stripBotMention(text, bot.userId),
    attachments: attachmentsOf(event, account),
    wasMentioned,
    receivedAt: ctx.receivedAt,
    route: {
      channel: "slack",
      accountId: account.accountId,
      to: event.channel,
      threadId: threadTs,
      replyToMessageId: event.ts,
      extra: {
        teamId: team,
        senderId: sender,
        chatType,
        mentioned: wasMentioned ? "1" : "0",
        ...(bot.userId ? { botUserId: bot.userId } : {}),
      },
    },
  });
}

/**
 * The keys of a user's message (dedup only; an edit, a delete, a reaction or a room event keeps
 * its `event_id` as its key, system-events.ts). A post's identity is its channel and `ts`: a retry
 * of the event carries the same `event_id` and the same channel and `ts`, and the `message` and
 * `app_mention` twins of one post carry different `event_id`s and the same channel and `ts`, so
 * `<channel>:<ts>` alone decides both and is the one key row stored. The `event_id` is the
 * delivery key: the twins share the dedup key, so the SessionDO needs it to keep a mention only
 * the second copy carries (as an event of its own, under this key, when the first was settled
 * unanswered), and it finds events stored under their `event_id` (the post as an alias) before.
 */
export function slackMessageKeys(team: string, channel: string, ts: string, eventId: string) {
  return { dedupKey: `slack:${team}:${channel}:${ts}`, deliveryKey: `slack:${team}:${eventId}` };
}

/**
 * A slash command becomes a message in the sender's slash session. Its reply goes back through
 * `response_url` (route.extra.responseUrl), ephemeral unless `slashCommand.ephemeral` is false.
 * It runs in the sender's slash session `agent:<agentId>:<sessionPrefix>:<userId>` (envelope.sessionScope).
 */
export function envelopeFromSlashCommand(
  command: SlackSlashCommand,
  ctx: SlackParseContext,
): SlackParseResult {
  const slash = ctx.account.slashCommand;
  if (!slash.enabled) return { dropped: "slashCommand.enabled is false" };
  if (command.command.toLowerCase() !== `/${slash.name.toLowerCase()}`)
    return { dropped: `unknown command ${command.command}` };
  const chatType = chatTypeOf(command.channel_id, undefined);
  const text = command.text.trim();
  return checkedEnvelope({
    dedupKey: `slack:${command.team_id}:slash:${command.trigger_id}`,
    kind: "message",
    channel: "slack",
    accountId: ctx.account.accountId,
    chatType,
    peerId: chatType === "direct" ? command.user_id : command.channel_id,
    teamId: command.team_id,
    senderId: command.user_id,
    senderName: command.user_name,
    text: text || "/help",
    sessionScope: `${slash.sessionPrefix}:${command.user_id}`,
    // The user addressed the bot by name: a slash command is a mention.
    wasMentioned: true,
    receivedAt: ctx.receivedAt,
    route: {
      channel: "slack",
      accountId: ctx.account.accountId,
      to: command.channel_id,
      extra: {
        teamId: command.team_id,
        senderId: command.user_id,
        chatType,
        mentioned: "1",
        responseUrl: command.response_url,
        responseType: slash.ephemeral ? "ephemeral" : "in_channel",
      },
    },
  });
}

function mentionsUser(text: string, userId: string): boolean {
  return text.includes(`<@${userId}>`) || text.includes(`<@${userId}|`);
}

/** `<@BOT> hello` → `hello`: the model should not see its own mention token as part of the request. */
function stripBotMention(text: string, botUserId: string | undefined): string {
  if (!botUserId) return text;
  return (
    text
      .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, "g"), "")
      .replace(/^\s+/, "")
      .trimEnd() || text.trim()
  );
}

function attachmentsOf(
  event: SlackMessageEvent,
  account: SlackAccount,
): InboundEnvelopeInput["attachments"] {
  if (!event.files?.length) return undefined;
  const maxBytes = account.mediaMaxMb * 1024 * 1024;
  // Metadata only: the bytes are fetched (with the bot token) by whoever needs them, never on the ack path.
  return event.files.slice(0, 8).map((file) => ({
    name: `${file.name ?? file.title ?? "file"} (Slack file ${file.id}${file.size !== undefined && file.size > maxBytes ? `, over mediaMaxMb ${account.mediaMaxMb}` : ""})`,
    mimeType: file.mimetype,
    sizeBytes: file.size,
    url:
      file.size !== undefined && file.size > maxBytes
        ? undefined
        : (file.url_private_download ?? file.url_private),
  }));
}
