import type { ContextPruningConfig } from "../config/memory-keys.ts";
import { estimateTokens } from "./compaction.ts";
import type { Message } from "./types.ts";

/**
 * Session pruning (OpenClaw's concepts/session-pruning, mode "cache-ttl"): old tool results are
 * trimmed, then cleared, in what the model is sent — the transcript keeps them whole. A decision
 * names the tool call it applies to and is kept (durable-objects/session/run/pruning.ts), so every
 * later request shows the same prefix and the prompt cache built on it stays valid; new decisions
 * are made only once the cache has expired, when the next request writes it afresh anyway.
 *
 * Planning, over the context as the stored decisions already leave it:
 * 1. Under SOFT_RATIO of the context window: nothing.
 * 2. Soft trim: a result over SOFT_TRIM_OVER characters keeps its first and last SOFT_KEEP.
 * 3. Still at HARD_RATIO or more, with at least HARD_MIN_CHARS of prunable text left: results are
 *    cleared to the placeholder, oldest first, until under HARD_RATIO or too little is left.
 * Never pruned: the last KEEP_ASSISTANT_TURNS assistant turns and what follows them, anything
 * before the first user message (the bootstrap reads), and tools outside `tools.allow`/`deny`.
 */

export const SOFT_RATIO = 0.3;
export const HARD_RATIO = 0.5;
export const SOFT_TRIM_OVER = 4_000;
export const SOFT_KEEP = 1_500;
export const HARD_MIN_CHARS = 50_000;
export const KEEP_ASSISTANT_TURNS = 3;

export interface PruneDecisions {
  /** Tool call ids whose result is trimmed to its head and tail. */
  soft: string[];
  /** Tool call ids whose result is replaced by the placeholder. */
  hard: string[];
}

export const NO_DECISIONS: PruneDecisions = { soft: [], hard: [] };

/** The messages as the decisions leave them (a result both trimmed and cleared reads cleared). */
export function applyPruning(
  messages: readonly Message[],
  decisions: PruneDecisions,
  placeholder: string,
): Message[] {
  if (!decisions.soft.length && !decisions.hard.length) return [...messages];
  const hard = new Set(decisions.hard);
  const soft = new Set(decisions.soft);
  return messages.map((message) => {
    if (message.role !== "tool") return message;
    if (hard.has(message.toolCallId)) return { ...message, content: placeholder };
    if (soft.has(message.toolCallId)) return { ...message, content: trimmed(message.content) };
    return message;
  });
}

/** New decisions for a context whose cache has expired; `changed` false when there are none. */
export function planPruning(args: {
  messages: readonly Message[];
  system: string;
  contextWindowTokens: number;
  decisions: PruneDecisions;
  config: ContextPruningConfig;
}): { decisions: PruneDecisions; changed: boolean } {
  const { messages, system, config } = args;
  const placeholder = config.hardClear.placeholder;
  const soft = new Set(args.decisions.soft);
  const hard = new Set(args.decisions.hard);
  const shown = (message: Extract<Message, { role: "tool" }>) =>
    hard.has(message.toolCallId)
      ? placeholder
      : soft.has(message.toolCallId)
        ? trimmed(message.content)
        : message.content;
  // One estimate of the whole context, then running totals: each decision changes one result's
  // length only, so the plan is linear in the transcript, not quadratic.
  let chars = estimateTokens(applyPruning(messages, args.decisions, placeholder), system) * 4;
  const ratio = () => chars / 4 / args.contextWindowTokens;
  const candidates = prunable(messages, config).filter((message) => !hard.has(message.toolCallId));
  let changed = false;
  if (ratio() < SOFT_RATIO) return { decisions: args.decisions, changed };
  for (const message of candidates)
    if (!soft.has(message.toolCallId) && message.content.length > SOFT_TRIM_OVER) {
      chars -= message.content.length - trimmed(message.content).length;
      soft.add(message.toolCallId);
      changed = true;
    }
  if (config.hardClear.enabled) {
    let remaining = candidates.reduce((sum, message) => sum + shown(message).length, 0);
    for (const message of candidates) {
      if (ratio() < HARD_RATIO || remaining < HARD_MIN_CHARS) break;
      const before = shown(message).length;
      hard.add(message.toolCallId);
      soft.delete(message.toolCallId);
      chars -= before - placeholder.length;
      remaining -= before;
      changed = true;
    }
  }
  return { decisions: { soft: [...soft], hard: [...hard] }, changed };
}

/** The tool results planning may touch, oldest first. */
function prunable(
  messages: readonly Message[],
  config: ContextPruningConfig,
): Array<Extract<Message, { role: "tool" }>> {
  const firstUser = messages.findIndex((message) => message.role === "user");
  if (firstUser < 0) return [];
  let assistants = 0;
  let protectedFrom = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role !== "assistant") continue;
    if (++assistants === KEEP_ASSISTANT_TURNS) {
      protectedFrom = i;
      break;
    }
  }
  if (assistants < KEEP_ASSISTANT_TURNS) return [];
  const allowed = toolFilter(config);
  return messages
    .slice(firstUser + 1, protectedFrom)
    .filter(
      (message): message is Extract<Message, { role: "tool" }> =>
        message.role === "tool" && allowed(message.name),
    );
}

function toolFilter(config: ContextPruningConfig): (name: string) => boolean {
  const allow = config.tools.allow?.map(glob);
  const deny = config.tools.deny?.map(glob) ?? [];
  return (name) =>
    (!allow || allow.some((pattern) => pattern.test(name))) &&
    !deny.some((pattern) => pattern.test(name));
}

function glob(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return new RegExp(`^${escaped}$`, "i");
}

function trimmed(content: string): string {
  if (content.length <= SOFT_TRIM_OVER) return content;
  const removed = content.length - 2 * SOFT_KEEP;
  return `${content.slice(0, SOFT_KEEP)}\n...\n[${removed} characters of this old tool result trimmed]\n...\n${content.slice(-SOFT_KEEP)}`;
}
