import type { EdgeclawConfig } from "../config/schema.ts";
import type { ReasoningLevel, ThinkLevel } from "../config/agents-schema.ts";
import type { SecretEnv } from "../config/secret-ref.ts";
import { resolveModel } from "./model-resolve.ts";

/**
 * Which thinking level and reasoning visibility a run uses, in OpenClaw's order (tools/thinking):
 * the message's inline directive, the session's override, the agent's `thinkingDefault`,
 * `agents.defaults.thinkingDefault`, and last the model: "medium" for a model whose catalog entry
 * says `reasoning: true`, else off. The adapters map the level to each model's own field.
 */
export type ThinkSource = "message" | "session" | "agent" | "config" | "model";

export interface ThinkChoice {
  level: ThinkLevel;
  source: ThinkSource;
}

export function resolveThinkLevel(
  config: EdgeclawConfig,
  agentId: string,
  layers: { message?: ThinkLevel; session?: ThinkLevel; modelReasons: boolean },
): ThinkChoice {
  if (layers.message) return { level: layers.message, source: "message" };
  if (layers.session) return { level: layers.session, source: "session" };
  const agent = config.agents.list.find((entry) => entry.id === agentId);
  if (agent?.thinkingDefault) return { level: agent.thinkingDefault, source: "agent" };
  const configured = config.agents.defaults.thinkingDefault;
  if (configured) return { level: configured, source: "config" };
  return { level: layers.modelReasons ? "medium" : "off", source: "model" };
}

/** Whether `ref`'s catalog entry declares `reasoning: true` (false when it cannot be resolved). */
export function modelReasons(
  config: EdgeclawConfig,
  env: SecretEnv,
  ref: string | undefined,
): boolean {
  if (!ref) return false;
  try {
    return resolveModel(config, env, ref).reasoning;
  } catch {
    return false;
  }
}

/** `/reasoning`: the message's directive, the session's, the agent's, then `agents.defaults.reasoningDefault`. */
export function resolveReasoningLevel(
  config: EdgeclawConfig,
  agentId: string,
  layers: { message?: ReasoningLevel; session?: ReasoningLevel },
): ReasoningLevel {
  const agent = config.agents.list.find((entry) => entry.id === agentId);
  return (
    layers.message ??
    layers.session ??
    agent?.reasoningDefault ??
    config.agents.defaults.reasoningDefault
  );
}

/** Thinking shown with /reasoning on: its own message, headed as OpenClaw heads it, and bounded. */
export const REASONING_MESSAGE_MAX_CHARS = 8000;

export function reasoningMessage(texts: readonly string[]): string | undefined {
  const body = texts
    .map((text) => text.trim())
    .filter(Boolean)
    .join("\n\n");
  if (!body) return undefined;
  const bounded =
    body.length > REASONING_MESSAGE_MAX_CHARS
      ? `${body.slice(0, REASONING_MESSAGE_MAX_CHARS).trimEnd()}…`
      : body;
  return `Thinking\n${bounded}`;
}
