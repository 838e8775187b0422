import type { ThinkLevel } from "../../config/agents-schema.ts";
import type { ResolvedModel } from "./types.ts";

/**
 * A thinking level → Chat Completions' `reasoning_effort` (tools/thinking). Sent to
 * api.openai.com, and to a compatible endpoint only for a model its catalog entry declares
 * `reasoning: true` (an endpoint that does not know the field may refuse the request). Off sends
 * nothing. The values a model takes are `compat.supportedReasoningEfforts`, else OpenAI's
 * minimal/low/medium/high; a level the model lacks falls back to the highest it takes.
 */
const DEFAULT_EFFORTS = ["minimal", "low", "medium", "high"];
const EFFORT_RANK = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

const LEVEL_EFFORT: Record<Exclude<ThinkLevel, "off">, string> = {
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "max",
  // Provider-managed thinking has no Chat Completions field: the middle of the range stands in.
  adaptive: "medium",
};

export function reasoningEffortFor(
  model: ResolvedModel,
  level: ThinkLevel | undefined,
): string | undefined {
  if (!level || level === "off") return undefined;
  if (!model.native && !model.reasoning) return undefined;
  const efforts = model.reasoningEfforts?.length ? model.reasoningEfforts : DEFAULT_EFFORTS;
  const wanted = LEVEL_EFFORT[level];
  if (efforts.includes(wanted)) return wanted;
  // "minimal" on a model without it is its lowest non-off effort; anything else its highest.
  const ranked = EFFORT_RANK.filter((effort) => effort !== "none" && efforts.includes(effort));
  return level === "minimal" ? ranked[0] : ranked.at(-1);
}
