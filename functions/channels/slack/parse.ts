import { z } from "zod";
import {
  checkedEnvelope,
  clip,
  type ChatType,
  type InboundEnvelope,
  type InboundEnvelopeInput,
} from "../../core/envelope.ts";
import type { SlackAccount } from "./config.ts";
import {
  slackAppRateLimitedSchema,
  slackEventCallbackSchema,
  slackInteractionSchema,
  slackMessageEventSchema,
  slackReactionEventSchema,
  slackRoomEventSchema,
  slackSlashCommandSchema,
  slackUrlVerificationSchema,
  type SlackEventCallback,
  type SlackInteraction,
  type SlackMessageEvent,
  type SlackReactionEvent,
  type SlackRoomEvent,
  type SlackSlashCommand,
} from "./payloads.ts";
import { firstIssue, readUtf8Body } from "../parse-json-body.ts";

/**
 * What a verified Slack request is, by body shape (one Request URL serves everything): Events API
 * JSON (`url_verification`, `event_callback`, `app_rate_limited`), a slash-command form, an
 * interactivity form (`payload=<json>`) or the slash-command `ssl_check`.
 */
export type SlackRequest =
  | { kind: "url_verification"; challenge: string }
  | { kind: "ssl_check" }
  | { kind: "app_rate_limited" }
  | { kind: "event"; callback: SlackEventCallback }
  | { kind: "slash"; command: SlackSlashCommand }
  | { kind: "interaction"; interaction: SlackInteraction }
  | { kind: "malformed"; reason: string };

export function classifySlackRequest(
  rawBody: Uint8Array,
  contentType: string | null,
): SlackRequest {
  const body = readUtf8Body(rawBody);
  if (!body.ok) return { kind: "malformed", reason: body.reason };
  const text = body.value;
  if ((contentType ?? "").toLowerCase().includes("application/x-www-form-urlencoded"))
    return classifyForm(new URLSearchParams(text));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "malformed", reason: "body is neither JSON nor a form" };
  }
  return classifySlackEventsBody(json);
}

/** An Events API body, already JSON (a Request URL body, or a Socket Mode `events_api` envelope's payload). */
export function classifySlackEventsBody(json: unknown): SlackRequest {
  const type = z.object({ type: z.string() }).loose().safeParse(json);
  if (!type.success) return { kind: "malformed", reason: "JSON body without a type" };
  switch (type.data.type) {
    case "url_verification": {
      const parsed = slackUrlVerificationSchema.safeParse(json);
      return parsed.success
        ? { kind: "url_verification", challenge: parsed.data.challenge }
        : malformed(parsed.error);
    }
    case "app_rate_limited":
      return slackAppRateLimitedSchema.safeParse(json).success
        ? { kind: "app_rate_limited" }
        : { kind: "malformed", reason: "bad app_rate_limited" };
    case "event_callback": {
      const parsed = slackEventCallbackSchema.safeParse(json);
      return parsed.success ? { kind: "event", callback: parsed.data } : malformed(parsed.error);
    }
    default:
      return {
        kind: "malformed",
        reason: `unknown request type ${JSON.stringify(type.data.type).slice(0, 60)}`,
      };
  }
}

function classifyForm(form: URLSearchParams): SlackRequest {
  if (form.get("ssl_check") === "1") return { kind: "ssl_check" };
  const payload = form.get("payload");
  if (payload !== null) {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return { kind: "malformed", reason: "payload= is not JSON" };
    }
    return classifySlackInteraction(json);
  }
  if (form.has("command")) return classifySlackSlashCommand(Object.fromEntries(form));
  return { kind: "malformed", reason: "form body is neither a command nor an interaction" };
}

/** An interactivity payload (the form's `payload=` JSON, or a Socket Mode `interactive` envelope's payload). */
export function classifySlackInteraction(json: unknown): SlackRequest {
  const parsed = slackInteractionSchema.safeParse(json);
  return parsed.success
    ? { kind: "interaction", interaction: parsed.data }
    : malformed(parsed.error);
}

/** Slash-command fields (the form, or a Socket Mode `slash_commands` envelope's payload: the same fields as JSON). */
export function classifySlackSlashCommand(fields: unknown): SlackRequest {
  const parsed = slackSlashCommandSchema.safeParse(fields);
  return parsed.success ? { kind: "slash", command: parsed.data } : malformed(parsed.error);
}

function malformed(error: z.ZodError): SlackRequest {
  return { kind: "malformed", reason: firstIssue(error) };
}

/**
 * Who the bot is on this workspace: from the event's envelope on the ack path (identity.ts), from
 * auth.test inside the SessionDO. Undefined fields when it could not be learned.
 */
export interface SlackBotIdentity {
  userId?: string;
  botId?: string;
  /** The app's id (`api_app_id`); bot posts carry it as `app_id` / `bot_profile.app_id`. */
  appId?: string;
}

export interface SlackParseContext {
  account: SlackAccount;
  bot: SlackBotIdentity;
  receivedAt: number;
}

export type SlackParseResult = { envelope: InboundEnvelope } | { dropped: string };

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
  // twin, so both land in one session and collapse there (by alias key); the SessionDO keeps the
  // mention the twin carries (durable-objects/session/storage.ts, insertInbox).
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
    dedupKey: `slack:${team}:${callback.event_id}`,
    aliasKeys: [`slack:${team}:${event.channel}:${event.ts}`],
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
 * Why the account takes nothing from this conversation, before any access check: DMs off
 * (`dm.enabled: false`), group DMs off (`dm.groupEnabled`, off by default) or not in
 * `dm.groupChannels`. Messages and every system event there (edits, reactions, clicks) alike: a
 * closed conversation has no side door.
 */
function closedConversation(
  account: SlackAccount,
  chatType: ChatType,
  channel: string,
): string | undefined {
  if (chatType === "direct" && account.dm?.enabled === false)
    return "DMs are disabled (dm.enabled)";
  if (chatType === "group") {
    if (!account.dm?.groupEnabled) return "group DMs are disabled (dm.groupEnabled)";
    const only = account.dm.groupChannels;
    if (only?.length && !only.includes(channel)) return "group DM not in dm.groupChannels";
  }
  return undefined;
}

/** A thread's ts, unless it is the message's own (a thread's root sits in its channel, not in the thread). */
function replyThread(threadTs: string | undefined, ts: string | undefined): string | undefined {
  return threadTs && threadTs !== ts ? threadTs : undefined;
}

/** Our own post: by the bot user, our bot id, or our app (bot posts carry `app_id` / `bot_profile.app_id`). */
function isOwnPost(
  event: { user?: string; bot_id?: string; app_id?: string; bot_profile?: { app_id?: string } },
  bot: SlackBotIdentity,
): boolean {
  if (bot.userId && event.user === bot.userId) return true;
  if (bot.botId && event.bot_id === bot.botId) return true;
  return !!bot.appId && (event.app_id === bot.appId || event.bot_profile?.app_id === bot.appId);
}

function fromEditOrDelete(
  callback: SlackEventCallback,
  event: SlackMessageEvent,
  ctx: SlackParseContext,
): SlackParseResult {
  const { bot } = ctx;
  const edited = event.subtype === "message_changed";
  const author = edited ? event.message?.user : event.previous_message?.user;
  if (
    (bot.userId && author === bot.userId) ||
    (edited && event.message && isOwnPost(event.message, bot))
  )
    return { dropped: "edit/delete of our own message" };
  const chatType = chatTypeOf(event.channel, event.channel_type);
  const what = edited
    ? `Slack message edited by ${author ?? "someone"}: ${clip(event.message?.text ?? "", 2000)}`
    : `Slack message deleted (ts ${event.deleted_ts ?? "?"})${author ? ` from ${author}` : ""}`;
  // The thread the message was in: an edit names it on the new message, a delete on the old one.
  const post = edited ? event.message : event.previous_message;
  return systemEnvelope(callback, ctx, {
    chatType,
    conversation: event.channel,
    user: author,
    text: what,
    threadTs: replyThread(post?.thread_ts, post?.ts),
  });
}

function fromReaction(
  callback: SlackEventCallback,
  event: SlackReactionEvent,
  ctx: SlackParseContext,
): SlackParseResult {
  const { account, bot } = ctx;
  const mode = account.reactionNotifications;
  if (mode === "off") return { dropped: "reactionNotifications is off" };
  if (mode === "own" && (!bot.userId || event.item_user !== bot.userId))
    return { dropped: "reaction on a message that is not ours" };
  if (mode === "allowlist" && !(account.reactionAllowlist ?? []).includes(event.user))
    return { dropped: "reacting user not in reactionAllowlist" };
  if (bot.userId && event.user === bot.userId) return { dropped: "own reaction" };
  const channel = event.item.channel;
  if (!channel) return { dropped: "reaction on a non-message item" };
  const verb = event.type === "reaction_added" ? "added" : "removed";
  return systemEnvelope(callback, ctx, {
    chatType: chatTypeOf(channel, undefined),
    conversation: channel,
    user: event.user,
    text: `Slack reaction ${verb}: :${event.reaction}: by ${event.user} on message ${event.item.ts ?? "?"}`,
  });
}

function fromRoomEvent(
  callback: SlackEventCallback,
  event: SlackRoomEvent,
  ctx: SlackParseContext,
): SlackParseResult {
  const channel =
    typeof event.channel === "string" ? event.channel : (event.channel?.id ?? event.channel_id);
  if (!channel) return { dropped: `${event.type} without a channel` };
  const name = typeof event.channel === "object" ? event.channel.name : undefined;
  const text =
    event.type === "channel_rename"
      ? `Slack channel renamed to #${name ?? "?"}`
      : `Slack ${event.type.replace(/_/g, " ")}${event.user ? ` by ${event.user}` : ""}`;
  return systemEnvelope(callback, ctx, {
    chatType: chatTypeOf(channel, undefined),
    conversation: channel,
    user: event.user,
    text,
  });
}

function systemEnvelope(
  callback: SlackEventCallback,
  ctx: SlackParseContext,
  at: { chatType: ChatType; conversation: string; user?: string; text: string; threadTs?: string },
): SlackParseResult {
  const team = callback.team_id;
  const sender = at.user ?? "slack";
  const direct = at.chatType === "direct";
  if (direct && !at.user) return { dropped: "DM system event without a user" };
  const closed = closedConversation(ctx.account, at.chatType, at.conversation);
  if (closed) return { dropped: closed };
  const threadId = direct ? undefined : at.threadTs;
  return checkedEnvelope({
    dedupKey: `slack:${team}:${callback.event_id}`,
    kind: "system",
    channel: "slack",
    accountId: ctx.account.accountId,
    chatType: at.chatType,
    peerId: direct ? sender : at.conversation,
    // A thread's events sit where its messages do: the thread, under its channel.
    ...(threadId ? { threadId, parentPeerId: at.conversation } : {}),
    teamId: team,
    senderId: sender,
    text: at.text,
    receivedAt: ctx.receivedAt,
    route: {
      channel: "slack",
      accountId: ctx.account.accountId,
      to: at.conversation,
      threadId: at.threadTs,
      extra: { teamId: team, chatType: at.chatType },
    },
  });
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

/**
 * Block actions, shortcuts and modal submissions become `Slack interaction: …` system events in the
 * acting user's conversation. trigger_id and response_url never reach the agent.
 */
export function envelopeFromInteraction(
  interaction: SlackInteraction,
  ctx: SlackParseContext,
): SlackParseResult {
  if (interaction.type === "block_suggestion")
    return { dropped: "block_suggestion needs an options answer, not an agent turn" };
  const team = interaction.team?.id ?? interaction.user.team_id ?? "unknown";
  const channel = interaction.channel?.id ?? interaction.container?.channel_id;
  const chatType: ChatType = channel ? chatTypeOf(channel, undefined) : "direct";
  const stamp =
    interaction.trigger_id ??
    interaction.action_ts ??
    `${interaction.view?.id ?? "view"}:${interaction.type}`;
  const details: string[] = [];
  if (interaction.callback_id ?? interaction.view?.callback_id)
    details.push(`callback_id=${interaction.callback_id ?? interaction.view?.callback_id}`);
  for (const action of interaction.actions ?? []) {
    const value = action.selected_option?.value ?? action.value;
    details.push(
      `action ${action.action_id ?? action.type ?? "?"}${value !== undefined ? `=${clip(value, 200)}` : ""}`,
    );
  }
  if (interaction.view?.state)
    details.push(`inputs=${clip(JSON.stringify(interaction.view.state.values), 2000)}`);
  const threadTs = replyThread(
    interaction.container?.thread_ts ?? interaction.message?.thread_ts,
    interaction.container?.message_ts ?? interaction.message?.ts,
  );
  const closed = closedConversation(ctx.account, chatType, channel ?? interaction.user.id);
  if (closed) return { dropped: closed };
  const threadId = chatType === "direct" ? undefined : threadTs;
  return checkedEnvelope({
    dedupKey: `slack:${team}:interaction:${stamp}`,
    kind: "system",
    channel: "slack",
    accountId: ctx.account.accountId,
    chatType,
    peerId: chatType === "direct" ? interaction.user.id : channel!,
    ...(threadId ? { threadId, parentPeerId: channel } : {}),
    teamId: team,
    senderId: interaction.user.id,
    senderName: interaction.user.name ?? interaction.user.username,
    text: `Slack interaction: ${interaction.type}${details.length ? ` (${details.join("; ")})` : ""}`,
    receivedAt: ctx.receivedAt,
    route: {
      channel: "slack",
      accountId: ctx.account.accountId,
      to: channel ?? interaction.user.id,
      threadId: threadTs,
      extra: { teamId: team, senderId: interaction.user.id, chatType },
    },
  });
}

/** DM (`im`, `D…`) → direct; MPIM → group; channels and private channels → channel. */
export function chatTypeOf(channelId: string, channelType: string | undefined): ChatType {
  if (channelType === "im" || (!channelType && channelId.startsWith("D"))) return "direct";
  if (channelType === "mpim") return "group";
  return "channel";
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
