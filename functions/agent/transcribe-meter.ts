import type { EdgeclawConfig } from "../config/schema.ts";
import type { MeterStart, MeterOutcome, WorstCase } from "./metering.ts";
import { modelPriceFor } from "./model-resolve.ts";
import type { ResolvedModel } from "./providers/types.ts";
import type { Usage } from "./types.ts";

/**
 * A transcription as the session's meter sees it (issue 22: transcription metered and under the
 * budgets): a model call of kind "transcription", admitted before the audio leaves — a budget with
 * no room refuses it, and the sender reads the reason in the one voice-note line — and settled
 * with what it used, into model_calls like every other call.
 *
 * - Price: the catalogue's (`models.providers.<id>.models[]` `cost`, USD per million tokens) or the
 *   built-in table's, as for chat models; none → unpriced (a USD cap refuses it unless
 *   `budgets.allowUnpricedModels`).
 * - Worst case (what admit reserves): the audio's bytes as input tokens — audio tokenizers make far
 *   fewer tokens than bytes — plus `maxChars` output tokens (no tokenizer makes more tokens than
 *   characters of text it writes).
 * - Usage (what settle charges): OpenAI's reported `usage` (input and output tokens) when the
 *   answer has it; otherwise (Workers AI whisper, whisper-1's duration usage) no input tokens and
 *   the transcript's length / 4 as output tokens: an estimate, said so in docs/concepts/media.md.
 */
export function transcriptionStart(
  config: EdgeclawConfig,
  ref: string,
  audioBytes: number,
  maxChars: number,
): MeterStart {
  return mediaCallStart(config, ref, audioBytes, maxChars);
}

/**
 * A media model call (transcription, speech) for the meter: `inputBound` and `outputBound` tokens
 * at most, priced as the catalogue prices `ref`.
 */
export function mediaCallStart(
  config: EdgeclawConfig,
  ref: string,
  inputBound: number,
  outputBound: number,
): MeterStart {
  const audioBytes = inputBound;
  const maxChars = outputBound;
  const slash = ref.indexOf("/");
  const cost = modelPriceFor(config, ref);
  // Only what a meter reads (ref, provider, model, price, bound) means anything here: no request
  // is built from this model, the transcription has its own wire (transcribe.ts).
  const model: ResolvedModel = {
    ref,
    providerId: ref.slice(0, slash),
    modelId: ref.slice(slash + 1),
    api: "openai-completions",
    baseUrl: "",
    headers: {},
    maxTokens: maxChars,
    contextWindow: 0,
    ...(cost ? { cost } : {}),
    idleTimeoutMs: 0,
    native: false,
    acceptsImages: false,
    cacheRetention: "none",
    reasoning: false,
  };
  const worst: WorstCase = cost
    ? {
        tokens: audioBytes + maxChars,
        usd: (audioBytes * cost.input + maxChars * cost.output) / 1_000_000,
      }
    : { tokens: audioBytes + maxChars, usd: 0 };
  return {
    model,
    request: { system: "", messages: [], tools: [], maxTokens: maxChars },
    worstCase: worst,
  };
}

/** What a transcription used, from the provider's `usage` when it reports tokens, else estimated. */
export function transcriptionOutcome(
  start: MeterStart,
  text: string,
  reported?: { input_tokens?: unknown; output_tokens?: unknown },
): MeterOutcome {
  const input = typeof reported?.input_tokens === "number" ? reported.input_tokens : 0;
  const output =
    typeof reported?.output_tokens === "number"
      ? reported.output_tokens
      : Math.ceil(text.length / 4);
  const usage: Usage = {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  const cost = start.model.cost;
  const costUsd = cost ? (input * cost.input + output * cost.output) / 1_000_000 : 0;
  return { ok: true, usage, costUsd };
}
