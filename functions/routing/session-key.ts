import type { ChatType } from "../core/envelope.ts";
import { MAIN_KEY, normalizeAccountId, normalizeAgentId, normalizeToken } from "./ids.ts";

/**
 * Session keys, in OpenClaw's exact shapes (concepts/session, channels/channel-routing):
 *
 *   direct, dmScope main (default)      agent:<agentId>:main
 *   direct, per-peer                    agent:<agentId>:direct:<peerId>
 *   direct, per-channel-peer            agent:<agentId>:<channel>:direct:<peerId>
 *   direct, per-account-channel-peer    agent:<agentId>:<channel>:<accountId>:direct:<peerId>
 *   group / channel                     agent:<agentId>:<channel>:group:<peerId> | …:channel:<peerId>
 *   thread (group/channel)              <base>:thread:<threadId>
 *   Telegram forum topic                <groupKey>:topic:<topicId>
 *
 * Ids are lower-cased; group keys never carry the account. For non-main DM scopes the peer is
 * replaced by its `session.identityLinks` canonical name when linked (candidates: `<peerId>` and
 * `<channel>:<peerId>`, case-insensitive). A thread inside a DM stays in the DM's session: DM
 * sessions are per person, not per thread.
 */
export type DmScope = "main" | "per-peer" | "per-channel-peer" | "per-account-channel-peer";

export interface SessionKeyInput {
  agentId: string;
  channel: string;
  accountId?: string;
  chatType: ChatType;
  peerId: string;
  threadId?: string;
  dmScope: DmScope;
  identityLinks?: Record<string, string[]>;
}

/** Channels whose thread ids are forum topics (`:topic:` instead of `:thread:`). */
const TOPIC_CHANNELS = new Set(["telegram"]);

export function mainSessionKey(agentId: string): string {
  return `agent:${normalizeAgentId(agentId)}:${MAIN_KEY}`;
}

export function buildSessionKey(input: SessionKeyInput): string {
  const agent = normalizeAgentId(input.agentId);
  const channel = normalizeToken(input.channel) || "unknown";
  if (input.chatType === "direct") {
    if (input.dmScope === "main") return mainSessionKey(agent);
    const linked = resolveIdentityLink(input.identityLinks, channel, input.peerId);
    const peer = normalizeToken(linked ?? input.peerId) || "unknown";
    switch (input.dmScope) {
      case "per-peer":
        return `agent:${agent}:direct:${peer}`;
      case "per-channel-peer":
        return `agent:${agent}:${channel}:direct:${peer}`;
      case "per-account-channel-peer":
        return `agent:${agent}:${channel}:${normalizeAccountId(input.accountId)}:direct:${peer}`;
    }
  }
  const base = `agent:${agent}:${channel}:${input.chatType}:${normalizeToken(input.peerId) || "unknown"}`;
  const thread = normalizeToken(input.threadId);
  if (!thread) return base;
  return `${base}:${TOPIC_CHANNELS.has(channel) ? "topic" : "thread"}:${thread}`;
}

/** The canonical name a peer is linked to, if any. */
export function resolveIdentityLink(
  identityLinks: Record<string, string[]> | undefined,
  channel: string,
  peerId: string,
): string | undefined {
  if (!identityLinks) return undefined;
  const candidates = new Set([normalizeToken(peerId), normalizeToken(`${channel}:${peerId}`)]);
  for (const [canonical, ids] of Object.entries(identityLinks)) {
    if (!canonical.trim()) continue;
    if (ids.some((id) => candidates.has(normalizeToken(id)))) return canonical.trim();
  }
  return undefined;
}

/** Key of a group's pending-history buffer (not a session): `<channel>:<accountId>:<group|channel>:<peerId>`. */
export function groupHistoryKey(input: {
  channel: string;
  accountId?: string;
  chatType: "group" | "channel";
  peerId: string;
}): string {
  return `${normalizeToken(input.channel)}:${normalizeAccountId(input.accountId)}:${input.chatType}:${normalizeToken(input.peerId)}`;
}
