import type { ThinkLevel } from "../../config/agents-schema.ts";

/**
 * A thinking level → Anthropic's request fields, per model (tools/thinking, Anthropic's extended
 * and adaptive thinking). Claude 4.7 and later (Opus 4.7+, every Claude 5, Fable, Mythos) only take
 * adaptive thinking — `thinking: { type: "adaptive" }` with `output_config.effort` — and reject a
 * token budget with a 400; Claude 4.6 takes both (adaptive is the recommended one); older Claude
 * models and other Anthropic-compatible models (MiniMax, proxies of older models) take only
 * `thinking: { type: "enabled", budget_tokens }`.
 */

export type AnthropicThinkingFields = {
  thinking?: { type: "adaptive" } | { type: "enabled"; budget_tokens: number };
  output_config?: { effort: AnthropicEffort };
};

type AnthropicEffort = "low" | "medium" | "high" | "xhigh" | "max";
const EFFORT_RANK: readonly AnthropicEffort[] = ["low", "medium", "high", "xhigh", "max"];

/** Token budgets for models without adaptive thinking; the API's floor is 1,024. */
const BUDGET_TOKENS: Record<Exclude<ThinkLevel, "off">, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  // A budget model has nothing above "high": OpenClaw maps these to the highest level it takes.
  xhigh: 16_384,
  max: 16_384,
  adaptive: 8192,
};
const MIN_BUDGET_TOKENS = 1024;
/** Room left for the answer itself when the budget is clamped under max_tokens. */
const ANSWER_RESERVE_TOKENS = 1024;

interface ClaudeVersion {
  family: string;
  major: number;
  minor: number;
}

/** `claude-opus-4-7`, `claude-sonnet-4-5-20250929`, `claude-sonnet-5`, `claude-3-7-sonnet-…`, `claude-fable-5`. */
export function claudeVersion(modelId: string): ClaudeVersion | undefined {
  const id = modelId.toLowerCase();
  const named = /claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2})(?!\d))?/.exec(id);
  if (named) return { family: named[1]!, major: Number(named[2]), minor: Number(named[3] ?? 0) };
  const legacy = /claude-(\d+)(?:-(\d{1,2})(?!\d))?-(opus|sonnet|haiku)/.exec(id);
  if (legacy)
    return { family: legacy[3]!, major: Number(legacy[1]), minor: Number(legacy[2] ?? 0) };
  return undefined;
}

function atLeast(version: ClaudeVersion, major: number, minor: number): boolean {
  return version.major > major || (version.major === major && version.minor >= minor);
}

/** Whether the model takes adaptive thinking, and whether it still takes a token budget. */
function thinkingModes(modelId: string): { adaptive: boolean; budget: boolean } {
  const version = claudeVersion(modelId);
  if (!version) return { adaptive: false, budget: true };
  if (version.family === "fable" || version.family === "mythos" || atLeast(version, 4, 7))
    return { adaptive: true, budget: false };
  if (atLeast(version, 4, 6)) return { adaptive: true, budget: true };
  return { adaptive: false, budget: true };
}

/** The `output_config.effort` values a model takes: "max" on Opus 4.6+, "xhigh" on Opus 4.7+. */
function effortsOf(modelId: string): AnthropicEffort[] {
  const version = claudeVersion(modelId);
  const efforts: AnthropicEffort[] = ["low", "medium", "high"];
  if (!version) return efforts;
  const top = version.family === "fable" || version.family === "mythos";
  if (top || (version.family === "opus" && atLeast(version, 4, 7))) efforts.push("xhigh");
  if (top || (version.family === "opus" && atLeast(version, 4, 6))) efforts.push("max");
  return efforts;
}

const LEVEL_EFFORT: Record<Exclude<ThinkLevel, "off" | "adaptive">, AnthropicEffort> = {
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "max",
};

/**
 * The fields for `level` on `modelId` with `maxTokens` of output. Off sends nothing (the API's
 * default is no thinking). A level the model lacks falls back as OpenClaw does: xhigh and max to
 * the highest it takes, adaptive to medium on a budget-only model.
 */
export function anthropicThinkingFields(
  modelId: string,
  level: ThinkLevel | undefined,
  maxTokens: number,
): AnthropicThinkingFields {
  if (!level || level === "off") return {};
  const modes = thinkingModes(modelId);
  if (modes.adaptive) {
    if (level === "adaptive") return { thinking: { type: "adaptive" } };
    const efforts = effortsOf(modelId);
    const wanted = LEVEL_EFFORT[level];
    const effort = efforts.includes(wanted)
      ? wanted
      : EFFORT_RANK.filter((candidate) => efforts.includes(candidate)).at(-1)!;
    return { thinking: { type: "adaptive" }, output_config: { effort } };
  }
  // budget_tokens must be at least 1,024 and below max_tokens.
  const budget = Math.min(BUDGET_TOKENS[level], maxTokens - ANSWER_RESERVE_TOKENS);
  if (budget < MIN_BUDGET_TOKENS) return {};
  return { thinking: { type: "enabled", budget_tokens: budget } };
}
