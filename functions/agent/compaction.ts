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
    if (message.role === "assistant")
      for (const call of message.toolCalls ?? [])
        chars += call.name.length + JSON.stringify(call.arguments).length;
  }
  return Math.ceil(chars / 4);
}

export interface CompactionSettings {
  /** Tokens kept free for the reply and tools; compaction starts when the prompt would eat into them. */
  reserveTokensFloor: number;
  /** Budget of recent context kept verbatim. */
  keepRecentTokens: number;
}

export function needsCompaction(
  messages: readonly Message[],
  system: string,
  contextWindow: number,
  settings: CompactionSettings,
): boolean {
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

export const COMPACTION_PREFIX =
  "[Summary of the earlier conversation, written by the agent when the context was compacted]";

const SUMMARY_SYSTEM = [
  "You compact a conversation between a user and an AI agent so the agent can continue it without the full history.",
  "Write a faithful summary: the user's goals and preferences, decisions made, facts learned, files touched, tool results that matter, and open tasks.",
  "Keep identifiers (ids, paths, URLs, numbers) exactly as written. Do not invent anything. Plain text, at most ~800 words.",
].join(" ");

export async function summarizeForCompaction(
  older: readonly Message[],
  callModel: (request: ModelRequest) => Promise<ModelResult>,
  options: { instructions?: string; signal?: AbortSignal; maxCharsPerMessage?: number } = {},
): Promise<{ summary: string; result: ModelResult }> {
  const cap = options.maxCharsPerMessage ?? 20_000;
  const clip = (text: string, limit: number) =>
    text.length > limit ? `${text.slice(0, limit)}…[${text.length - limit} more characters]` : text;
  const transcript = older
    .map((message) => {
      if (message.role === "tool")
        return `[tool ${message.name} result${message.isError ? " (error)" : ""}]\n${clip(message.content, Math.min(4000, cap))}`;
      if (message.role === "assistant") {
        const calls = (message.toolCalls ?? [])
          .map((call) => `[called ${call.name} ${JSON.stringify(call.arguments).slice(0, 500)}]`)
          .join("\n");
        return `ASSISTANT: ${clip(message.content, cap)}${calls ? `\n${calls}` : ""}`;
      }
      return `USER: ${clip(message.content, cap)}`;
    })
    .join("\n\n");
  const ask = options.instructions
    ? `\n\nExtra instructions for this summary: ${options.instructions}`
    : "";
  const result = await callModel({
    system: SUMMARY_SYSTEM,
    messages: [{ role: "user", content: `Conversation to summarise:\n\n${transcript}${ask}` }],
    tools: [],
    signal: options.signal,
  });
  return { summary: `${COMPACTION_PREFIX}\n${result.text.trim()}`, result };
}

/**
 * Splits messages into consecutive slices of at most `budgetTokens` each (a message larger than
 * the budget gets a slice of its own, clipped when it is summarised).
 */
export function slicesWithin(messages: readonly Message[], budgetTokens: number): Message[][] {
  const slices: Message[][] = [];
  let current: Message[] = [];
  let tokens = 0;
  for (const message of messages) {
    const size = estimateTokens([message]);
    if (current.length && tokens + size > budgetTokens) {
      slices.push(current);
      current = [];
      tokens = 0;
    }
    current.push(message);
    tokens += size;
  }
  if (current.length) slices.push(current);
  return slices;
}

/**
 * Summarises `older` (after an earlier summary, if any) in slices that each fit the summarising
 * request into the model's context: each slice is summarised together with the summary so far,
 * so a transcript far larger than the window still compacts. One slice when it all fits.
 */
export async function summarizeInSlices(
  previousSummary: string | undefined,
  older: readonly Message[],
  callModel: (request: ModelRequest) => Promise<ModelResult>,
  options: {
    contextWindow: number;
    reserveTokens: number;
    instructions?: string;
    signal?: AbortSignal;
  },
): Promise<string> {
  // Room for one slice: the window minus the reply reserve, the instructions and a summary so far.
  const room = Math.max(2_000, options.contextWindow - options.reserveTokens - 2_000);
  const budget = Math.max(1_000, Math.floor(room / 2));
  let summary = previousSummary;
  for (const slice of slicesWithin(older, budget)) {
    const input: Message[] = summary ? [{ role: "user", content: summary }, ...slice] : slice;
    ({ summary } = await summarizeForCompaction(input, callModel, {
      instructions: options.instructions,
      signal: options.signal,
      maxCharsPerMessage: budget * 4,
    }));
  }
  return summary ?? COMPACTION_PREFIX;
}

/** The summary kept when the model cannot summarise: what was there before, and what was dropped. */
export function droppedSummary(
  previousSummary: string | undefined,
  dropped: number,
  reason: string,
): string {
  const note = `[${dropped} earlier message(s) were dropped without a summary because summarising failed: ${reason}]`;
  return previousSummary ? `${previousSummary}\n${note}` : `${COMPACTION_PREFIX}\n${note}`;
}
