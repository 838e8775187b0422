import { createHmac } from "node:crypto";

/**
 * The fake model server's emulation of Anthropic's thinking rules, as its API documents them
 * (extended thinking, adaptive thinking, thinking with tool use). Its own table of the models the
 * tests name, independent of the adapter's: a request a real API would refuse gets the same 400.
 *   - `thinking: { type: "enabled", budget_tokens }` needs 1,024 ≤ budget < max_tokens, and Claude
 *     4.7+ refuses it (adaptive only); `{ type: "adaptive" }` needs Claude 4.6+;
 *   - `output_config.effort` must be one the model takes;
 *   - with thinking on, the assistant turn whose tool results come last must start with its
 *     thinking block, and every thinking block sent back must carry the signature this server
 *     gave that text (a block edited, forged or from elsewhere is refused).
 * Answers to a request with thinking on start with a signed thinking block.
 */

interface ModelRules {
  adaptive: boolean;
  budget: boolean;
  efforts: string[];
}

const MODELS: Record<string, ModelRules> = {
  "claude-opus-4-7": {
    adaptive: true,
    budget: false,
    efforts: ["low", "medium", "high", "xhigh", "max"],
  },
  "claude-sonnet-5": { adaptive: true, budget: false, efforts: ["low", "medium", "high"] },
  "claude-opus-4-6": { adaptive: true, budget: true, efforts: ["low", "medium", "high", "max"] },
  "claude-sonnet-4-6": { adaptive: true, budget: true, efforts: ["low", "medium", "high"] },
  "claude-sonnet-4-5": { adaptive: false, budget: true, efforts: [] },
};

const SIGNING_KEY = "fake-anthropic-thinking";

export function signThinking(text: string): string {
  return createHmac("sha256", SIGNING_KEY).update(text).digest("base64");
}

type Body = Record<string, unknown>;

/** Whether the request turns thinking on (enabled with a budget, or adaptive). */
export function thinkingRequested(body: Body): boolean {
  const thinking = record(body.thinking);
  return thinking?.type === "enabled" || thinking?.type === "adaptive";
}

/** What a real API would answer with a 400 about this request's thinking, or undefined. */
export function thinkingProblem(body: Body): string | undefined {
  const thinking = record(body.thinking);
  const rules = typeof body.model === "string" ? MODELS[body.model] : undefined;
  if (thinking?.type === "enabled") {
    const budget = thinking.budget_tokens;
    if (typeof budget !== "number" || budget < 1024)
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (typeof body.max_tokens !== "number" || budget >= body.max_tokens)
      return "`max_tokens` must be greater than `thinking.budget_tokens`";
    if (rules && !rules.budget)
      return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  } else if (thinking?.type === "adaptive") {
    if (rules && !rules.adaptive) return "adaptive thinking is not supported on this model";
  } else if (thinking !== undefined && thinking.type !== "disabled") {
    return "thinking.type: Input should be 'enabled', 'adaptive' or 'disabled'";
  }
  const effort = record(body.output_config)?.effort;
  if (effort !== undefined && rules && !rules.efforts.includes(String(effort)))
    return `output_config.effort: "${String(effort)}" is not supported by ${String(body.model)}`;
  return thinkingRequested(body) ? toolRoundProblem(body) : undefined;
}

function toolRoundProblem(body: Body): string | undefined {
  const messages = Array.isArray(body.messages) ? body.messages.map(record) : [];
  for (const [index, message] of messages.entries()) {
    if (message?.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const block of message.content.map(record)) {
      if (block?.type === "thinking" && block.signature !== signThinking(String(block.thinking)))
        return `messages.${index}.content: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  const last = messages.at(-1);
  const answered = messages.at(-2);
  const lastBlocks = Array.isArray(last?.content) ? last.content.map(record) : [];
  if (answered?.role !== "assistant" || !lastBlocks.some((block) => block?.type === "tool_result"))
    return undefined;
  const first = Array.isArray(answered.content) ? record(answered.content[0]) : undefined;
  if (first?.type === "thinking" || first?.type === "redacted_thinking") return undefined;
  return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
