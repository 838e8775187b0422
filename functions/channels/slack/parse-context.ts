import type { ChatType, InboundEnvelope } from "../../core/envelope.ts";
import type { SlackAccount } from "./config.ts";

/**
 * The facts every Slack envelope builder reads — who the bot is, what kind of conversation a
 * channel id names, whether the account takes anything from it, which thread a post sits in — kept
 * apart so the message builder (parse.ts) and the system-event builders (system-events.ts) share
 * one answer without importing each other; route.ts and identity.ts read them too.
 */

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

/** DM (`im`, `D…`) → direct; MPIM → group; channels and private channels → channel. */
export function chatTypeOf(channelId: string, channelType: string | undefined): ChatType {
  if (channelType === "im" || (!channelType && channelId.startsWith("D"))) return "direct";
  if (channelType === "mpim") return "group";
  return "channel";
}

/**
 * Why the account takes nothing from this conversation, before any access check: DMs off
 * (`dm.enabled: false`), group DMs off (`dm.groupEnabled`, off by default) or not in
 * `dm.groupChannels`. Messages and every system event there (edits, reactions, clicks) alike: a
 * closed conversation has no side door.
 */
export function closedConversation(
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
export function replyThread(
  threadTs: string | undefined,
  ts: string | undefined,
): string | undefined {
  return threadTs && threadTs !== ts ? threadTs : undefined;
}

/** Our own post: by the bot user, our bot id, or our app (bot posts carry `app_id` / `bot_profile.app_id`). */
export function isOwnPost(
  event: { user?: string; bot_id?: string; app_id?: string; bot_profile?: { app_id?: string } },
  bot: SlackBotIdentity,
): boolean {
  if (bot.userId && event.user === bot.userId) return true;
  if (bot.botId && event.bot_id === bot.botId) return true;
  return !!bot.appId && (event.app_id === bot.appId || event.bot_profile?.app_id === bot.appId);
}
