import { checkedEnvelope, clip, type ChatType } from "../../core/envelope.ts";
import type {
  SlackEventCallback,
  SlackInteraction,
  SlackMessageEvent,
  SlackReactionEvent,
  SlackRoomEvent,
} from "./payloads.ts";
import {
  chatTypeOf,
  closedConversation,
  isOwnPost,
  replyThread,
  type SlackParseContext,
  type SlackParseResult,
} from "./parse-context.ts";

/**
 * Slack's system events — edits and deletes, reactions, channel membership and renames, and
 * interactivity (buttons, shortcuts, modals) — each become a `kind: "system"` envelope kept as
 * context in the conversation it happened in, never a run. Apart from parse.ts, which builds the
 * messages that do start runs, because these follow the one shape of systemEnvelope instead.
 */

export function fromEditOrDelete(
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

export function fromReaction(
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

export function fromRoomEvent(
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
