import * as z from "zod";
import { ModelError, type ModelRequest, type Usage } from "../types.ts";
import { classifyStreamError } from "./errors.ts";
import { safeJson, type SseEvent } from "./http.ts";
import { parseToolArguments } from "./transcript.ts";
import type { ProviderResult } from "./types.ts";

/**
 * The Responses API's answer → our result. Streamed, it is typed events: `response.output_text.
 * delta` (answer text), `response.output_item.added` / `.done` (a function_call item, its name and
 * call_id, then its whole arguments), `response.function_call_arguments.delta` (arguments as they
 * come), `response.reasoning_summary_text.delta`, and one terminal event: `response.completed`,
 * `response.incomplete` (max_output_tokens) or `response.failed`; `error` reports a failure.
 * A stream without a terminal event was cut.
 */

const itemSchema = z
  .object({
    type: z.string(),
    id: z.string().nullish(),
    call_id: z.string().nullish(),
    name: z.string().nullish(),
    arguments: z.string().nullish(),
    content: z.array(z.object({ type: z.string(), text: z.string().nullish() }).loose()).nullish(),
    summary: z.array(z.object({ text: z.string().nullish() }).loose()).nullish(),
  })
  .loose();

const usageSchema = z
  .object({
    input_tokens: z.number().nullish(),
    output_tokens: z.number().nullish(),
    input_tokens_details: z.object({ cached_tokens: z.number().nullish() }).loose().nullish(),
  })
  .loose();

const errorSchema = z
  .object({ code: z.string().nullish(), message: z.string().nullish(), type: z.string().nullish() })
  .loose();

const responseSchema = z
  .object({
    status: z.string().nullish(),
    output: z.array(itemSchema).nullish(),
    usage: usageSchema.nullish(),
    error: errorSchema.nullish(),
    incomplete_details: z.object({ reason: z.string().nullish() }).loose().nullish(),
  })
  .loose();

const eventSchema = z
  .object({
    type: z.string(),
    delta: z.string().nullish(),
    output_index: z.number().nullish(),
    item_id: z.string().nullish(),
    item: itemSchema.nullish(),
    response: responseSchema.nullish(),
    code: z.string().nullish(),
    message: z.string().nullish(),
    error: errorSchema.nullish(),
  })
  .loose();

interface CallSlot {
  itemId: string;
  callId: string;
  name: string;
  args: string;
}

class ResponsesAnswer {
  text = "";
  reasoning = "";
  private readonly calls: CallSlot[] = [];
  private final: z.infer<typeof responseSchema> | undefined;

  constructor(private readonly request: ModelRequest) {}

  add(event: z.infer<typeof eventSchema>): void {
    switch (event.type) {
      case "response.output_text.delta":
        if (event.delta) {
          this.text += event.delta;
          this.request.onTextDelta?.(event.delta);
        }
        return;
      case "response.reasoning_summary_text.delta":
        this.reasoning += event.delta ?? "";
        return;
      case "response.output_item.added":
      case "response.output_item.done":
        if (event.item?.type === "function_call") this.callItem(event.item);
        return;
      case "response.function_call_arguments.delta": {
        const slot = this.calls.find((call) => call.itemId === event.item_id) ?? this.calls.at(-1);
        if (slot) slot.args += event.delta ?? "";
        return;
      }
      case "response.completed":
      case "response.incomplete":
        this.final = event.response ?? {};
        return;
      case "response.failed":
        throw failure(event.response?.error ?? {});
      case "error":
        throw failure(event.error ?? event);
    }
  }

  /** An added item opens a call; its done item carries the whole arguments, which win. */
  private callItem(item: z.infer<typeof itemSchema>): void {
    const itemId = item.id ?? item.call_id ?? "";
    const slot = this.calls.find((call) => call.itemId === itemId);
    if (!slot) {
      this.calls.push({
        itemId,
        callId: item.call_id ?? "",
        name: item.name ?? "",
        args: item.arguments ?? "",
      });
      return;
    }
    if (item.call_id) slot.callId = item.call_id;
    if (item.name) slot.name = item.name;
    if (typeof item.arguments === "string" && item.arguments) slot.args = item.arguments;
  }

  /** The non-streamed answer: the same items, whole. */
  addResponse(response: z.infer<typeof responseSchema>): void {
    for (const item of response.output ?? []) {
      if (item.type === "function_call") this.callItem(item);
      if (item.type === "message")
        for (const part of item.content ?? [])
          if (part.type === "output_text" && part.text) {
            this.text += part.text;
            this.request.onTextDelta?.(part.text);
          }
      if (item.type === "reasoning")
        this.reasoning += (item.summary ?? []).map((part) => part.text ?? "").join("\n");
    }
    this.final = response;
  }

  result(): ProviderResult {
    const final = this.final;
    if (!final) throw new ModelError("network", "the response stream ended before it completed");
    if (final.status === "failed") throw failure(final.error ?? {});
    const toolCalls = this.calls
      .filter((call) => call.name)
      .map((call, i) => ({
        id: call.callId || `call_${i}_${call.name}`,
        name: call.name,
        arguments: parseToolArguments(call.args),
      }));
    const incomplete = final.status === "incomplete";
    return {
      text: this.text,
      toolCalls,
      usage: toUsage(final.usage),
      stopReason: toolCalls.length
        ? "tool_use"
        : incomplete
          ? final.incomplete_details?.reason === "max_output_tokens"
            ? "max_tokens"
            : "other"
          : "end",
      ...(this.reasoning.trim()
        ? { thinking: [{ type: "thinking" as const, text: this.reasoning }] }
        : {}),
    };
  }
}

export async function readResponseStream(
  events: AsyncIterable<SseEvent>,
  request: ModelRequest,
): Promise<ProviderResult> {
  const answer = new ResponsesAnswer(request);
  for await (const raw of events) {
    const parsed = eventSchema.safeParse(safeJson(raw.data));
    if (parsed.success) answer.add(parsed.data);
  }
  return answer.result();
}

export function fromResponseJson(json: unknown, request: ModelRequest): ProviderResult {
  const parsed = responseSchema.safeParse(json);
  if (!parsed.success) throw new ModelError("server", "the Responses answer had no output");
  const answer = new ResponsesAnswer(request);
  answer.addResponse(parsed.data);
  return answer.result();
}

/** input_tokens includes the cached ones; ours are disjoint, as Anthropic's. */
function toUsage(raw: z.infer<typeof usageSchema> | null | undefined): Usage {
  const cached = raw?.input_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (raw?.input_tokens ?? 0) - cached),
    outputTokens: raw?.output_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
}

function failure(error: z.infer<typeof errorSchema>): ModelError {
  return classifyStreamError({
    type: error.code ?? error.type ?? undefined,
    message: error.message ?? "the response failed",
  });
}
