import type { Message, ModelRequest, ModelResult } from "./types.ts";

/**
 * Compaction keeps a long session inside the model's context window: older turns are replaced by a
 * model-written summary, the recent tail stays verbatim. The cut never separates an assistant
 * tool call from its results and the tail always starts at a user message.
 */

/** A rough token estimate (4 characters per token), as OpenClaw's estimator does without a tokenizer. */
export function estimateTokens(messages: readonly Message[], system = ""): number {
  let chars = system.length;
  for (const message of messages) {
    chars += message.content.length + 16;
    if (message.role === "assistant") for (const call of message.toolCalls ?? []) chars += call.name.length + JSON.stringify(call.arguments).length;
  }
  return Math.ceil(chars / 4);
}

export interface CompactionSettings {
  /** Tokens kept free for the reply and tools; compaction starts when the prompt would eat into them. */
  reserveTokensFloor: number;
  /** Budget of recent context kept verbatim. */
  keepRecentTokens: number;
}

export function needsCompaction(messages: readonly Message[], system: string, contextWindow: number, settings: CompactionSettings): boolean {
  return estimateTokens(messages, system) > contextWindow - settings.reserveTokensFloor;
}

/**
 * Index of the first message kept verbatim: the earliest user message such that the tail after it
 * fits `keepRecentTokens`, or 0 when nothing older can be summarised.
 */
export function compactionCut(messages: readonly Message[], keepRecentTokens: number): number {
  let cut = 0;
  let tailTokens = 0;
  for (let i = messages.length - 1; i > 0; i--) {
    tailTokens += estimateTokens([messages[i]!]);
    if (messages[i]!.role === "user") {
      if (tailTokens > keepRecentTokens && cut !== 0) break;
      cut = i;
    }
  }
  // Always keep at least the newest user turn; summarise only when there is something before it.
  return cut;
}

export const COMPACTION_PREFIX = "[Summary of the earlier conversation, written by the agent when the context was compacted]";

const SUMMARY_SYSTEM = [
  "You compact a conversation between a user and an AI agent so the agent can continue it without the full history.",
  "Write a faithful summary: the user's goals and preferences, decisions made, facts learned, files touched, tool results that matter, and open tasks.",
  "Keep identifiers (ids, paths, URLs, numbers) exactly as written. Do not invent anything. Plain text, at most ~800 words.",
].join(" ");

export async function summarizeForCompaction(
  older: readonly Message[],
  callModel: (request: ModelRequest) => Promise<ModelResult>,
  options: { instructions?: string; signal?: AbortSignal } = {},
): Promise<{ summary: string; result: ModelResult }> {
  const transcript = older
    .map((message) => {
      if (message.role === "tool") return `[tool ${message.name} result${message.isError ? " (error)" : ""}]\n${message.content.slice(0, 4000)}`;
      if (message.role === "assistant") {
        const calls = (message.toolCalls ?? []).map((call) => `[called ${call.name} ${JSON.stringify(call.arguments).slice(0, 500)}]`).join("\n");
        return `ASSISTANT: ${message.content}${calls ? `\n${calls}` : ""}`;
      }
      return `USER: ${message.content}`;
    })
    .join("\n\n");
  const ask = options.instructions ? `\n\nExtra instructions for this summary: ${options.instructions}` : "";
  const result = await callModel({
    system: SUMMARY_SYSTEM,
    messages: [{ role: "user", content: `Conversation to summarise:\n\n${transcript}${ask}` }],
    tools: [],
    signal: options.signal,
  });
  return { summary: `${COMPACTION_PREFIX}\n${result.text.trim()}`, result };
}
