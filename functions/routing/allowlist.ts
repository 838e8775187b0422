import type { AccessGroup } from "../config/routing-keys.ts";
import { normalizeToken } from "./ids.ts";

/**
 * Does an allowlist admit a sender? Entries may be a bare platform id, `<channel>:<id>`,
 * `user:<id>`, `"*"` (everyone) or `accessGroup:<name>` (a top-level `accessGroups` entry; an
 * unknown or non-static group admits nobody). Ids compare case-insensitively; OpenClaw never
 * translates ids between channels, and neither does this.
 */
export interface AllowListMatch {
  allowed: boolean;
  /** Matched only through `"*"` (never enough to be owner). */
  viaWildcard: boolean;
}

export interface AllowListOptions {
  /**
   * false: channel-less entries (a bare id, `user:<id>`, an access group's `"*"` members) do not
   * match; only entries naming the sender's channel (`discord:123`, or the group's `discord` list) do.
   */
  channelLessEntries?: boolean;
}

export function matchAllowList(
  entries: readonly string[] | undefined,
  sender: { channel: string; senderId: string },
  accessGroups: Record<string, AccessGroup> = {},
  options: AllowListOptions = {},
): AllowListMatch {
  if (!entries || entries.length === 0) return { allowed: false, viaWildcard: false };
  const channelLess = options.channelLessEntries ?? true;
  const candidates = senderCandidates(sender.channel, sender.senderId, channelLess);
  let wildcard = false;
  for (const entry of entries) {
    const trimmed = entry.trim();
    if (trimmed === "*") {
      wildcard = true;
      continue;
    }
    if (trimmed.toLowerCase().startsWith("accessgroup:")) {
      const group = accessGroups[trimmed.slice("accessGroup:".length)];
      if (group?.type !== "message.senders") continue;
      // Members listed under the sender's channel mean that channel even when bare.
      const own = senderCandidates(sender.channel, sender.senderId, true);
      if ((group.members[sender.channel] ?? []).some((member) => own.has(normalizeToken(member))))
        return { allowed: true, viaWildcard: false };
      if ((group.members["*"] ?? []).some((member) => candidates.has(normalizeToken(member))))
        return { allowed: true, viaWildcard: false };
      continue;
    }
    if (candidates.has(normalizeToken(trimmed))) return { allowed: true, viaWildcard: false };
  }
  return { allowed: wildcard, viaWildcard: wildcard };
}

function senderCandidates(channel: string, senderId: string, channelLess: boolean): Set<string> {
  const id = normalizeToken(senderId);
  const ch = normalizeToken(channel);
  return new Set([`${ch}:${id}`, `${ch}:user:${id}`, ...(channelLess ? [id, `user:${id}`] : [])]);
}
