import * as z from "zod";
import { ModelError, type ModelRequest, type ToolCall, type Usage } from "../types.ts";
import { classifyStreamError } from "./errors.ts";
import { safeJson, type SseEvent } from "./http.ts";
import type { ProviderResult } from "./types.ts";

/**
 * Gemini's GenerateContentResponse → our result. Streamed (`alt=sse`), every event is a whole
 * response with the parts produced since the last one: text parts are answer text (or thought
 * summaries when `thought` is set), a functionCall part is a whole call; the last event carries
 * `finishReason` and the final `usageMetadata`. A stream that closes without a finishReason was cut.
 */

const partSchema = z
  .object({
    text: z.string().nullish(),
    thought: z.boolean().nullish(),
    thoughtSignature: z.string().nullish(),
    functionCall: z
      .object({
        id: z.string().nullish(),
        name: z.string(),
        args: z.record(z.string(), z.unknown()).nullish(),
      })
      .loose()
      .nullish(),
  })
  .loose();

const usageSchema = z
  .object({
    promptTokenCount: z.number().nullish(),
    candidatesTokenCount: z.number().nullish(),
    cachedContentTokenCount: z.number().nullish(),
    thoughtsTokenCount: z.number().nullish(),
  })
  .loose();

const responseSchema = z
  .object({
    candidates: z
      .array(
        z
          .object({
            content: z
              .object({ parts: z.array(partSchema).nullish() })
              .loose()
              .nullish(),
            finishReason: z.string().nullish(),
          })
          .loose(),
      )
      .nullish(),
    usageMetadata: usageSchema.nullish(),
    promptFeedback: z.object({ blockReason: z.string().nullish() }).loose().nullish(),
    error: z
      .object({
        code: z.number().nullish(),
        message: z.string().nullish(),
        status: z.string().nullish(),
      })
      .loose()
      .nullish(),
  })
  .loose();

type GeminiResponse = z.infer<typeof responseSchema>;

class GeminiAnswer {
  text = "";
  thought = "";
  calls: ToolCall[] = [];
  usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  finishReason: string | undefined;

  constructor(private readonly request: ModelRequest) {}

  add(response: GeminiResponse): void {
    if (response.error) {
      throw classifyStreamError({
        type: response.error.status ?? undefined,
        code: response.error.code ? String(response.error.code) : undefined,
        message: response.error.message ?? "unknown error",
      });
    }
    const blocked = response.promptFeedback?.blockReason;
    if (blocked) throw new ModelError("bad_request", `Gemini blocked the prompt: ${blocked}`);
    if (response.usageMetadata) this.usage = toUsage(response.usageMetadata);
    const candidate = response.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        this.calls.push({
          // Gemini names a call by position, not id; ours must be unique across the transcript.
          id: part.functionCall.id || `call_${crypto.randomUUID().slice(0, 12)}`,
          name: part.functionCall.name,
          arguments: part.functionCall.args ?? {},
          ...(part.thoughtSignature ? { thoughtSignature: part.thoughtSignature } : {}),
        });
      } else if (part.text && part.thought) {
        this.thought += part.text;
      } else if (part.text) {
        this.text += part.text;
        this.request.onTextDelta?.(part.text);
      }
    }
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
  }

  result(): ProviderResult {
    if (!this.finishReason)
      throw new ModelError("network", "the Gemini stream ended before its finishReason");
    if (this.finishReason === "MALFORMED_FUNCTION_CALL")
      throw new ModelError("server", "Gemini finishReason: MALFORMED_FUNCTION_CALL");
    return {
      text: this.text,
      toolCalls: this.calls,
      usage: this.usage,
      stopReason: this.calls.length ? "tool_use" : stopReasonOf(this.finishReason),
      ...(this.thought.trim() ? { thinking: [{ type: "thinking", text: this.thought }] } : {}),
    };
  }
}

export async function readGeminiStream(
  events: AsyncIterable<SseEvent>,
  request: ModelRequest,
): Promise<ProviderResult> {
  const answer = new GeminiAnswer(request);
  for await (const event of events) {
    const parsed = responseSchema.safeParse(safeJson(event.data));
    if (parsed.success) answer.add(parsed.data);
  }
  return answer.result();
}

/** `:generateContent`'s one JSON document (a proxy that ignores `alt=sse`), or an array of them. */
export function fromGeminiJson(json: unknown, request: ModelRequest): ProviderResult {
  const answer = new GeminiAnswer(request);
  for (const item of Array.isArray(json) ? json : [json]) {
    const parsed = responseSchema.safeParse(item);
    if (!parsed.success) throw new ModelError("server", "the Gemini response was not one");
    answer.add(parsed.data);
  }
  return answer.result();
}

/**
 * promptTokenCount includes the cached tokens (ours are disjoint, as Anthropic's); thinking tokens
 * are billed as output, so they count as output here.
 */
function toUsage(raw: z.infer<typeof usageSchema>): Usage {
  const cached = raw.cachedContentTokenCount ?? 0;
  return {
    inputTokens: Math.max(0, (raw.promptTokenCount ?? 0) - cached),
    outputTokens: (raw.candidatesTokenCount ?? 0) + (raw.thoughtsTokenCount ?? 0),
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
}

function stopReasonOf(reason: string): ProviderResult["stopReason"] {
  if (reason === "STOP") return "end";
  if (reason === "MAX_TOKENS") return "max_tokens";
  return "other";
}
