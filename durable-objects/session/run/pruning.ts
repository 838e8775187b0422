import {
  applyPruning,
  NO_DECISIONS,
  planPruning,
  type PruneDecisions,
} from "../../../functions/agent/context-pruning.ts";
import { resolveModel } from "../../../functions/agent/model-resolve.ts";
import type { Message } from "../../../functions/agent/types.ts";
import { parseDuration } from "../../../functions/automation/schedule.ts";
import type { ContextPruningConfig } from "../../../functions/config/memory-keys.ts";
import { selectionFor } from "./deps.ts";
import { withSummary } from "./context.ts";
import { settings } from "../settings.ts";
import type { SessionState } from "../state.ts";

/**
 * What the model is sent of the session: the summary and the uncompacted transcript, with the
 * session's pruning decisions applied (functions/agent/context-pruning.ts). Before a model call
 * (`plan`), once the prompt cache has expired — the last model call, the newest assistant row, is
 * at least `ttl` old — new decisions are made and kept in meta `pruning:<sessionId>`: one row,
 * written only when something was pruned. The transcript itself is never changed.
 */

const SHORT_CACHE_MS = 5 * 60_000;
const LONG_CACHE_MS = 60 * 60_000;

export function modelMessages(
  s: SessionState,
  sessionId: string,
  plan?: { system: string; modelOverride: string | undefined; now: number },
): Message[] {
  const rows = s.store.transcript.recent(sessionId);
  const messages = withSummary(
    s,
    sessionId,
    rows.map((row) => row.message),
  );
  const pruning = pruningFor(s, plan?.modelOverride);
  if (!pruning) return messages;
  const key = `pruning:${sessionId}` as const;
  let decisions: PruneDecisions = s.store.meta.getJson(key) ?? NO_DECISIONS;
  const lastCallAt = rows.findLast((row) => row.message.role === "assistant")?.createdAt;
  if (plan && lastCallAt !== undefined && plan.now - lastCallAt >= pruning.ttlMs) {
    const planned = planPruning({
      messages,
      system: plan.system,
      contextWindowTokens: pruning.contextWindow,
      decisions,
      config: pruning.config,
    });
    if (planned.changed) {
      decisions = onlyPresent(planned.decisions, messages);
      s.store.meta.setJson(key, decisions);
    }
  }
  return applyPruning(messages, decisions, pruning.config.hardClear.placeholder);
}

/**
 * The pruning in force for the session's model, or undefined when it is off: `mode` as set, else
 * "cache-ttl" for an Anthropic model (OpenClaw's default for Anthropic) and off for the rest.
 * `ttl` as set, else the model's cache lifetime (1 h with cacheRetention "long", else 5 min) —
 * so the context changes exactly when the cache would be written afresh anyway.
 */
function pruningFor(
  s: SessionState,
  modelOverride: string | undefined,
): { config: ContextPruningConfig; ttlMs: number; contextWindow: number } | undefined {
  const config = s.config.agents.defaults.contextPruning;
  if (config.mode === "off") return undefined;
  const agentId = s.store.meta.get("agentId") ?? "main";
  const ref = selectionFor(
    s.config,
    s.env,
    agentId,
    modelOverride ?? settings(s).modelOverride,
  ).primary;
  if (!ref) return undefined;
  let model: ReturnType<typeof resolveModel>;
  try {
    model = resolveModel(s.config, s.env, ref);
  } catch {
    return undefined;
  }
  if (!config.mode && model.api !== "anthropic-messages") return undefined;
  const ttlMs = config.ttl
    ? parseDuration(config.ttl)
    : config.mode || model.cacheRetention !== "long"
      ? SHORT_CACHE_MS
      : LONG_CACHE_MS;
  return { config, ttlMs, contextWindow: model.contextWindow };
}

/** Decisions about results still in the context (compaction folds older ones into the summary). */
function onlyPresent(decisions: PruneDecisions, messages: readonly Message[]): PruneDecisions {
  const ids = new Set(
    messages.flatMap((message) => (message.role === "tool" ? [message.toolCallId] : [])),
  );
  return {
    soft: decisions.soft.filter((id) => ids.has(id)),
    hard: decisions.hard.filter((id) => ids.has(id)),
  };
}
