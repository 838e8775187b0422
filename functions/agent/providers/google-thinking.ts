import type { ThinkLevel } from "../../config/agents-schema.ts";

/**
 * A thinking level → Gemini's `generationConfig.thinkingConfig`, per model (tools/thinking,
 * providers/google, Google's thinking guide):
 *   - Gemini 3 and later (and the `gemini-*-latest` aliases) take `thinkingLevel`; Pro takes low
 *     and high, Flash minimal, low, medium and high. Neither can switch thinking off, so "off" is
 *     the lowest level. "adaptive" sends no level: Google picks it (dynamic thinking).
 *   - Gemini 2.x takes `thinkingBudget` in tokens; -1 is Google's dynamic budget (adaptive). Flash
 *     takes 0 (off); Pro only works thinking and refuses 0, so off sends nothing for it.
 *   - Anything else behind this wire format (Gemma, a proxy's own ids) is sent no thinkingConfig.
 * With a level other than off the answer includes thought summaries (`includeThoughts`), kept for
 * /reasoning.
 */

export interface GeminiThinkingConfig {
  thinkingLevel?: "minimal" | "low" | "medium" | "high";
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

interface GeminiVersion {
  major: number;
  flash: boolean;
}

/** `gemini-3.1-pro-preview`, `gemini-2.5-flash-lite`, `models/gemini-flash-latest`. */
export function geminiVersion(modelId: string): GeminiVersion | undefined {
  const id = modelId.toLowerCase().replace(/^models\//, "");
  if (!id.startsWith("gemini-")) return undefined;
  const flash = id.includes("flash");
  const numbered = /^gemini-(\d+)(?:\.\d+)?-/.exec(id);
  if (numbered) return { major: Number(numbered[1]), flash };
  // The aliases follow Google's current generation, which takes thinking levels.
  if (id.endsWith("-latest")) return { major: 3, flash };
  return undefined;
}

const BUDGET_TOKENS: Record<Exclude<ThinkLevel, "off" | "adaptive">, number> = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24_576,
  // Flash's budget stops at 24,576; Pro goes to 32,768 (see proBudget).
  xhigh: 24_576,
  max: 24_576,
};
const PRO_MAX_BUDGET = 32_768;

export function geminiThinkingConfig(
  modelId: string,
  level: ThinkLevel | undefined,
): GeminiThinkingConfig | undefined {
  if (!level) return undefined;
  const version = geminiVersion(modelId);
  if (!version || version.major < 2) return undefined;
  if (version.major >= 3) return thinkingLevelConfig(version, level);
  if (level === "off") return version.flash ? { thinkingBudget: 0 } : undefined;
  if (level === "adaptive") return { thinkingBudget: -1, includeThoughts: true };
  const budget =
    !version.flash && (level === "xhigh" || level === "max")
      ? PRO_MAX_BUDGET
      : BUDGET_TOKENS[level];
  return { thinkingBudget: budget, includeThoughts: true };
}

function thinkingLevelConfig(version: GeminiVersion, level: ThinkLevel): GeminiThinkingConfig {
  if (level === "adaptive") return { includeThoughts: true };
  const lowest = version.flash ? "minimal" : "low";
  if (level === "off") return { thinkingLevel: lowest };
  if (level === "minimal") return { thinkingLevel: lowest, includeThoughts: true };
  if (level === "low") return { thinkingLevel: "low", includeThoughts: true };
  // Pro has nothing between low and high; its default (high) stands in for medium.
  if (level === "medium")
    return { thinkingLevel: version.flash ? "medium" : "high", includeThoughts: true };
  return { thinkingLevel: "high", includeThoughts: true };
}

/**
 * Gemini 3 refuses a tool round whose first call lacks its signature. A call from another model's
 * turn has none; Google documents this value for history it did not sign.
 */
export const UNSIGNED_CALL_SIGNATURE = "skip_thought_signature_validator";

export function requiresCallSignatures(modelId: string): boolean {
  return (geminiVersion(modelId)?.major ?? 0) >= 3;
}
