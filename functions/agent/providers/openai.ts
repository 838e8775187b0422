import * as z from "zod";
import {
  ModelError,
  type Message,
  type ModelRequest,
  type ToolCall,
  type Usage,
} from "../types.ts";
import { classifyStreamError } from "./errors.ts";
import { postToProvider, safeJson, type SseEvent } from "./http.ts";
import { parseToolArguments, sanitizeTranscript } from "./transcript.ts";
import { reasoningEffortFor } from "./openai-reasoning.ts";
import type { ProviderCall, ProviderResult, ResolvedModel } from "./types.ts";

/**
 * OpenAI Chat Completions (`POST {baseUrl}/chat/completions`, streamed with usage). The format of
 * every OpenAI-compatible server: OpenRouter, Groq, DeepSeek, vLLM, Ollama, LM Studio, LiteLLM,
 * Cloudflare AI Gateway's compat endpoint.
 */

export const callOpenAiCompletions: ProviderCall = async (model, request) => {
  const body = await postToProvider({
    url: `${model.baseUrl.replace(/\/+$/, "")}/chat/completions`,
    headers: {
      ...(model.apiKey ? { authorization: `Bearer ${model.apiKey}` } : {}),
      ...model.headers,
    },
    body: openAiRequestBody(model, request),
    idleTimeoutMs: model.idleTimeoutMs,
    signal: request.signal,
    secrets: [model.apiKey],
    baseUrlKey: `models.providers.${model.providerId}.baseUrl`,
  });
  if (body.kind === "json") return fromCompletionJson(body.json, request);
  return readCompletionStream(body.events, request);
};

export function openAiRequestBody(
  model: ResolvedModel,
  request: ModelRequest,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: model.modelId,
    messages: toOpenAiMessages(request.system, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  // Native OpenAI reasoning models reject `max_tokens`; compatible servers mostly only know it.
  const maxTokens = request.maxTokens ?? model.maxTokens;
  body[model.native ? "max_completion_tokens" : "max_tokens"] = maxTokens;
  const effort = reasoningEffortFor(model, request.thinkLevel);
  if (effort) body.reasoning_effort = effort;
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
  }
  return body;
}

type OpenAiContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

type OpenAiMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | OpenAiContentPart[] }
  | {
      role: "assistant";
      content: string | null;
      tool_calls?: Array<{
        id: string;
        type: "function";
        function: { name: string; arguments: string };
      }>;
    }
  | { role: "tool"; tool_call_id: string; content: string };

export function toOpenAiMessages(system: string, messages: Message[]): OpenAiMessage[] {
  // Always `system`, never `developer`: non-native endpoints reject the developer role.
  const out: OpenAiMessage[] = system ? [{ role: "system", content: system }] : [];
  for (const message of sanitizeTranscript(messages)) {
    if (message.role === "user") {
      out.push({
        role: "user",
        content: message.images?.length
          ? [
              { type: "text", text: message.content },
              ...message.images.map((image) => ({
                type: "image_url" as const,
                image_url: { url: `data:${image.mimeType};base64,${image.data}` },
              })),
            ]
          : message.content,
      });
    } else if (message.role === "assistant") {
      const calls = message.toolCalls ?? [];
      out.push({
        role: "assistant",
        content: message.content || (calls.length ? null : ""),
        ...(calls.length
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      });
    } else {
      out.push({
        role: "tool",
        tool_call_id: message.toolCallId,
        content: message.isError ? `Error: ${message.content}` : message.content,
      });
    }
  }
  return out;
}

const usageSchema = z
  .object({
    prompt_tokens: z.number().nullish(),
    completion_tokens: z.number().nullish(),
    prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).loose().nullish(),
  })
  .loose();

const errorSchema = z
  .object({
    message: z.string().optional(),
    type: z.string().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
  })
  .loose();

const chunkSchema = z
  .object({
    choices: z
      .array(
        z
          .object({
            delta: z
              .object({
                content: z.string().nullish(),
                reasoning_content: z.string().nullish(),
                reasoning: z.string().nullish(),
                tool_calls: z
                  .array(
                    z
                      .object({
                        index: z.number().optional(),
                        id: z.string().nullish(),
                        function: z
                          .object({ name: z.string().nullish(), arguments: z.string().nullish() })
                          .loose()
                          .nullish(),
                      })
                      .loose(),
                  )
                  .nullish(),
              })
              .loose()
              .nullish(),
            finish_reason: z.string().nullish(),
          })
          .loose(),
      )
      .nullish(),
    usage: usageSchema.nullish(),
    error: errorSchema.nullish(),
  })
  .loose();

interface CallState {
  id: string;
  name: string;
  args: string;
}

async function readCompletionStream(
  events: AsyncIterable<SseEvent>,
  request: ModelRequest,
): Promise<ProviderResult> {
  const calls: CallState[] = [];
  const slotByIndex = new Map<number, CallState>();
  let text = "";
  let reasoning = "";
  let usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let finishReason: string | undefined;
  let done = false;
  for await (const raw of events) {
    if (raw.data.trim() === "[DONE]") {
      done = true;
      break;
    }
    const parsed = chunkSchema.safeParse(safeJson(raw.data));
    if (!parsed.success) continue;
    const chunk = parsed.data;
    if (chunk.error) throw streamError(chunk.error);
    if (chunk.usage) usage = toUsage(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (delta?.content) {
        text += delta.content;
        request.onTextDelta?.(delta.content);
      }
      // DeepSeek, vLLM and OpenRouter stream the model's reasoning beside the answer.
      reasoning += delta?.reasoning_content ?? delta?.reasoning ?? "";
      for (const fragment of delta?.tool_calls ?? []) {
        let slot =
          fragment.index !== undefined
            ? slotByIndex.get(fragment.index)
            : calls.find((call) => fragment.id && call.id === fragment.id);
        if (!slot) {
          slot = { id: "", name: "", args: "" };
          calls.push(slot);
          if (fragment.index !== undefined) slotByIndex.set(fragment.index, slot);
        }
        if (fragment.id && !slot.id) slot.id = fragment.id;
        const name = fragment.function?.name;
        // OpenAI sends the name once; some compatible servers repeat it in every fragment.
        if (name && name !== slot.name) slot.name += name;
        if (fragment.function?.arguments) slot.args += fragment.function.arguments;
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  if (finishReason === "error") throw new ModelError("server", "Provider finish_reason: error");
  if (!done && !finishReason)
    throw new ModelError("network", "the completion stream ended before [DONE]");
  return {
    text,
    toolCalls: calls.filter((call) => call.name).map((call, i) => toToolCall(call, i)),
    usage,
    stopReason: mapFinishReason(finishReason),
    ...reasoningOf(reasoning),
  };
}

const completionJsonSchema = z
  .object({
    choices: z
      .array(
        z
          .object({
            message: z
              .object({
                content: z.string().nullish(),
                reasoning_content: z.string().nullish(),
                reasoning: z.string().nullish(),
                tool_calls: z
                  .array(
                    z
                      .object({
                        id: z.string().nullish(),
                        function: z
                          .object({ name: z.string(), arguments: z.string().nullish() })
                          .loose(),
                      })
                      .loose(),
                  )
                  .nullish(),
              })
              .loose(),
            finish_reason: z.string().nullish(),
          })
          .loose(),
      )
      .min(1),
    usage: usageSchema.nullish(),
  })
  .loose();

function fromCompletionJson(json: unknown, request: ModelRequest): ProviderResult {
  const parsed = completionJsonSchema.safeParse(json);
  if (!parsed.success) throw new ModelError("server", "the completion response had no choices");
  const choice = parsed.data.choices[0]!;
  const text = choice.message.content ?? "";
  if (text) request.onTextDelta?.(text);
  if (choice.finish_reason === "error")
    throw new ModelError("server", "Provider finish_reason: error");
  return {
    text,
    toolCalls: (choice.message.tool_calls ?? []).map((call, i) =>
      toToolCall(
        { id: call.id ?? "", name: call.function.name, args: call.function.arguments ?? "" },
        i,
      ),
    ),
    usage: parsed.data.usage
      ? toUsage(parsed.data.usage)
      : { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    stopReason: mapFinishReason(choice.finish_reason ?? undefined),
    ...reasoningOf(choice.message.reasoning_content ?? choice.message.reasoning ?? ""),
  };
}

/** Unsigned reasoning text: kept for /reasoning, never sent back (DeepSeek refuses it in history). */
function reasoningOf(text: string): Pick<ProviderResult, "thinking"> {
  return text.trim() ? { thinking: [{ type: "thinking", text }] } : {};
}

function toToolCall(call: CallState, position: number): ToolCall {
  // Some local servers omit ids; the transcript needs one to pair the result with the call.
  return {
    id: call.id || `call_${position}_${call.name}`,
    name: call.name,
    arguments: parseToolArguments(call.args),
  };
}

/** OpenAI counts cached prompt tokens inside prompt_tokens; ours are disjoint, as Anthropic's. */
function toUsage(raw: z.infer<typeof usageSchema>): Usage {
  const cached = raw.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (raw.prompt_tokens ?? 0) - cached),
    outputTokens: raw.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
  };
}

function streamError(error: z.infer<typeof errorSchema>): ModelError {
  return classifyStreamError({
    type: error.type ?? undefined,
    code: error.code === null || error.code === undefined ? undefined : String(error.code),
    message: error.message ?? "unknown error",
  });
}

function mapFinishReason(reason: string | undefined): ProviderResult["stopReason"] {
  switch (reason) {
    case "stop":
      return "end";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    default:
      return "other";
  }
}
