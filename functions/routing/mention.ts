import type { InboundEnvelope } from "../core/envelope.ts";
import type { MentionPatternPolicy } from "../config/channel-access.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { listAgents } from "./agents.ts";
import { normalizeToken } from "./ids.ts";

/**
 * Mention gating facts (channels/groups "Mention gating"). A native platform mention
 * (`envelope.wasMentioned`) always counts. The regex fallback is the agent's
 * `groupChat.mentionPatterns`, else `messages.groupChat.mentionPatterns`, else a pattern derived from
 * the agent's identity name; `channels.<ch>.mentionPatterns` scopes it per conversation.
 * Patterns are case-insensitive; invalid or unsafe (nested-quantifier) patterns are ignored.
 */
const MAX_PATTERN_LENGTH = 256;
const NESTED_QUANTIFIER = /\([^()]*[+*}][^()]*\)\s*[+*{]/;

export function compileMentionPatterns(patterns: readonly string[]): RegExp[] {
  const compiled: RegExp[] = [];
  for (const pattern of patterns) {
    if (!pattern || pattern.length > MAX_PATTERN_LENGTH || NESTED_QUANTIFIER.test(pattern))
      continue;
    try {
      compiled.push(new RegExp(pattern, "i"));
    } catch {
      // Invalid pattern: ignored, as OpenClaw does (config check reports it).
    }
  }
  return compiled;
}

export function mentionPatternsFor(config: EdgeclawConfig, agentId: string | undefined): string[] {
  const agent = listAgents(config).find((entry) => entry.id === agentId);
  if (agent?.mentionPatterns) return agent.mentionPatterns;
  if (config.messages.groupChat.mentionPatterns) return config.messages.groupChat.mentionPatterns;
  const name = agent?.identityName?.trim();
  if (!name) return [];
  return [`@?${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`];
}

/** Whether the regex fallback is enabled in this conversation under the channel's scope policy. */
export function regexMentionsEnabled(
  policy: MentionPatternPolicy | undefined,
  conversationIds: readonly string[],
): boolean {
  if (!policy) return true;
  const ids = new Set(conversationIds.map(normalizeToken));
  const inList = (list: readonly string[]) => list.some((id) => ids.has(normalizeToken(id)));
  if (inList(policy.denyIn)) return false;
  return policy.mode === "allow" ? true : inList(policy.allowIn);
}

export function wasMentioned(
  config: EdgeclawConfig,
  envelope: InboundEnvelope,
  agentId: string | undefined,
  policy: MentionPatternPolicy | undefined,
): boolean {
  if (envelope.wasMentioned) return true;
  const conversationIds = [envelope.peerId];
  if (envelope.threadId) conversationIds.push(`${envelope.peerId}:topic:${envelope.threadId}`);
  if (!regexMentionsEnabled(policy, conversationIds)) return false;
  return compileMentionPatterns(mentionPatternsFor(config, agentId)).some((regex) =>
    regex.test(envelope.text),
  );
}
