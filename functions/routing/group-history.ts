import type { EdgeclawConfig } from "../config/schema.ts";
import { effectiveChannelAccess } from "../config/channel-access.ts";

/**
 * The pending group history: un-mentioned messages kept as context (decideAccess → "history-only")
 * and injected with OpenClaw's wrapper strings on the next trigger, then cleared. Pure helpers; the
 * SessionDO keeps the buffer in its own storage.
 */
export const HISTORY_CONTEXT_HEADER = "[Chat messages since your last reply - for context]";
export const CURRENT_MESSAGE_HEADER = "[Current message - respond to this]";

export interface HistoryEntry {
  senderId: string;
  senderName?: string;
  text: string;
  /** Unix ms. */
  at: number;
}

/**
 * Window size for a conversation: `channels.<ch>.accounts.<id>.historyLimit` → `channels.<ch>.historyLimit`
 * → `messages.groupChat.historyLimit` (50). DMs: `dms.<peer>.historyLimit` → `dmHistoryLimit` → the same
 * chain. 0 disables.
 */
export function resolveHistoryLimit(
  config: EdgeclawConfig,
  target: {
    channel: string;
    accountId: string;
    chatType: "direct" | "group" | "channel";
    peerId: string;
  },
): number {
  const access = effectiveChannelAccess(config.channels[target.channel], target.accountId);
  if (target.chatType === "direct") {
    const perPeer = access.dms?.[target.peerId]?.historyLimit;
    if (perPeer !== undefined) return perPeer;
    if (access.dmHistoryLimit !== undefined) return access.dmHistoryLimit;
  }
  return access.historyLimit ?? config.messages.groupChat.historyLimit;
}

/** Appends one entry and keeps only the newest `limit` (an empty buffer when limit is 0). */
export function appendHistory(
  buffer: readonly HistoryEntry[],
  entry: HistoryEntry,
  limit: number,
): HistoryEntry[] {
  if (limit <= 0) return [];
  const next = [...buffer, entry];
  return next.length > limit ? next.slice(next.length - limit) : next;
}

/** The sender label used on history lines and on the current message in non-direct chats. */
export function senderLabel(entry: Pick<HistoryEntry, "senderId" | "senderName">): string {
  return entry.senderName ? `${entry.senderName} (${entry.senderId})` : entry.senderId;
}

/**
 * The model's text for a triggered turn. With no pending history the current body is returned as is
 * (prefixed with the sender label in groups); otherwise both wrapper blocks are used. At most
 * `limit` history lines are kept (the newest).
 */
export function formatWithGroupHistory(input: {
  history: readonly HistoryEntry[];
  current: Pick<HistoryEntry, "senderId" | "senderName" | "text">;
  chatType: "direct" | "group" | "channel";
  limit: number;
}): string {
  const current =
    input.chatType === "direct"
      ? input.current.text
      : `${senderLabel(input.current)}: ${input.current.text}`;
  const history = input.limit > 0 ? input.history.slice(-input.limit) : [];
  if (history.length === 0) return current;
  const lines = history.map((entry) => `${senderLabel(entry)}: ${entry.text}`);
  return [HISTORY_CONTEXT_HEADER, ...lines, "", CURRENT_MESSAGE_HEADER, current].join("\n");
}
