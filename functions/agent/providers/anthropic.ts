import { z } from "zod";
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
import type { ProviderCall, ProviderResult, ResolvedModel } from "./types.ts";

/**
 * Anthropic Messages API (`POST {baseUrl}/v1/messages`, streamed). Also serves every
 * Anthropic-compatible endpoint (Cloudflare AI Gateway, MiniMax, proxies) through `baseUrl`.
 */

export const ANTHROPIC_VERSION = "2023-06-01";

export const callAnthropic: ProviderCall = async (model, request) => {
  const body = await postToProvider({
    url: messagesUrl(model.baseUrl),
    headers: {
      "anthropic-version": ANTHROPIC_VERSION,
      ...(model.apiKey ? { "x-api-key": model.apiKey } : {}),
      ...model.headers,
    },
    body: anthropicRequestBody(model, request),
    idleTimeoutMs: model.idleTimeoutMs,
    signal: request.signal,
    secrets: [model.apiKey],
    baseUrlKey: `models.providers.${model.providerId}.baseUrl`,
  });
  if (body.kind === "json") return fromMessageJson(body.json, request);
  return readMessageStream(body.events, request);
};

/** `{baseUrl}/v1/messages`; a baseUrl that already ends in `/v1` is not doubled. */
export function messagesUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  return base.endsWith("/v1") ? `${base}/messages` : `${base}/v1/messages`;
}

type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "image"; source: { type: "base64"; media_type: string; data: string } }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean };

interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

export function anthropicRequestBody(
  model: ResolvedModel,
  request: ModelRequest,
): Record<string, unknown> {
  const messages = toAnthropicMessages(request.messages);
  const body: Record<string, unknown> = {
    model: model.modelId,
    max_tokens: request.maxTokens ?? model.maxTokens,
    stream: true,
    messages,
  };
  const cache = cacheControlOf(model);
  if (request.system) body.system = systemBlocks(request, cache);
  // Second breakpoint: the newest block of the conversation, so the next turn reads everything
  // up to here from the cache and only pays for what it adds.
  const lastBlock = messages.at(-1)?.content.at(-1);
  if (cache && lastBlock) (lastBlock as Record<string, unknown>).cache_control = cache;
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
  }
  return body;
}

/**
 * Anthropic prompt caching (OpenClaw's `cacheRetention`): "short" is the 5-minute cache, "long"
 * the 1-hour one; "none" sends no breakpoint.
 */
function cacheControlOf(model: ResolvedModel): Record<string, unknown> | undefined {
  if (model.cacheRetention === "none") return undefined;
  return model.cacheRetention === "long" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

/**
 * The system prompt as blocks. With caching, the stable part carries the first breakpoint (it
 * caches the tools too, which come before it) and the part below the cache boundary follows
 * uncached, so the date and runtime lines do not spoil the prefix.
 */
function systemBlocks(request: ModelRequest, cache: Record<string, unknown> | undefined) {
  const boundary = request.systemCacheBoundary ?? request.system.length;
  const stable = request.system.slice(0, boundary).trimEnd();
  const dynamic = request.system.slice(boundary).trim();
  if (!cache) return [{ type: "text", text: request.system }];
  return [
    { type: "text", text: stable || request.system, cache_control: cache },
    ...(stable && dynamic ? [{ type: "text", text: dynamic }] : []),
  ];
}

/** Our transcript → Anthropic turns: tool results ride in user turns, consecutive same-role turns merge. */
export function toAnthropicMessages(messages: Message[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage["role"], blocks: AnthropicBlock[]) => {
    if (!blocks.length) return;
    const last = out.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of sanitizeTranscript(messages)) {
    if (message.role === "user") {
      // Images before the text that refers to them, as Anthropic's vision guide recommends.
      const images: AnthropicBlock[] = (message.images ?? []).map((image) => ({
        type: "image",
        source: { type: "base64", media_type: image.mimeType, data: image.data },
      }));
      push("user", [...images, { type: "text", text: message.content || "(empty message)" }]);
    } else if (message.role === "assistant") {
      const blocks: AnthropicBlock[] = [];
      if (message.content) blocks.push({ type: "text", text: message.content });
      for (const call of message.toolCalls ?? [])
        blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.arguments });
      push("assistant", blocks);
    } else {
      push("user", [
        {
          type: "tool_result",
          tool_use_id: message.toolCallId,
          content: message.content,
          ...(message.isError ? { is_error: true } : {}),
        },
      ]);
    }
  }
  // The Messages API requires the first turn to be the user's.
  if (out[0]?.role === "assistant")
    out.unshift({ role: "user", content: [{ type: "text", text: "(conversation continues)" }] });
  return out;
}

const usageSchema = z
  .object({
    input_tokens: z.number().nullish(),
    output_tokens: z.number().nullish(),
    cache_read_input_tokens: z.number().nullish(),
    cache_creation_input_tokens: z.number().nullish(),
  })
  .loose();

const streamEventSchema = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("message_start"),
      message: z.object({ usage: usageSchema.optional() }).loose(),
    })
    .loose(),
  z
    .object({
      type: z.literal("content_block_start"),
      index: z.number(),
      content_block: z
        .object({
          type: z.string(),
          id: z.string().optional(),
          name: z.string().optional(),
          text: z.string().optional(),
          input: z.unknown().optional(),
        })
        .loose(),
    })
    .loose(),
  z
    .object({
      type: z.literal("content_block_delta"),
      index: z.number(),
      delta: z
        .object({
          type: z.string(),
          text: z.string().optional(),
          partial_json: z.string().optional(),
        })
        .loose(),
    })
    .loose(),
  z.object({ type: z.literal("content_block_stop"), index: z.number() }).loose(),
  z
    .object({
      type: z.literal("message_delta"),
      delta: z.object({ stop_reason: z.string().nullish() }).loose(),
      usage: usageSchema.optional(),
    })
    .loose(),
  z.object({ type: z.literal("message_stop") }).loose(),
  z.object({ type: z.literal("ping") }).loose(),
  z
    .object({
      type: z.literal("error"),
      error: z.object({ type: z.string().optional(), message: z.string().optional() }).loose(),
    })
    .loose(),
]);

interface BlockState {
  type: string;
  text: string;
  id?: string;
  name?: string;
  json: string;
  input?: Record<string, unknown>;
}

async function readMessageStream(
  events: AsyncIterable<SseEvent>,
  request: ModelRequest,
): Promise<ProviderResult> {
  const blocks = new Map<number, BlockState>();
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let stopReason: string | null | undefined;
  let finished = false;
  for await (const raw of events) {
    const parsed = streamEventSchema.safeParse(safeJson(raw.data));
    if (!parsed.success) continue; // unknown event types are allowed by the API's versioning policy
    const event = parsed.data;
    switch (event.type) {
      case "message_start":
        applyUsage(usage, event.message.usage);
        break;
      case "content_block_start": {
        const block = event.content_block;
        const input =
          isPlainObject(block.input) && Object.keys(block.input).length ? block.input : undefined;
        blocks.set(event.index, {
          type: block.type,
          text: block.text ?? "",
          id: block.id,
          name: block.name,
          json: "",
          input,
        });
        if (block.type === "text" && block.text) request.onTextDelta?.(block.text);
        break;
      }
      case "content_block_delta": {
        const block = blocks.get(event.index);
        if (!block) break;
        if (event.delta.type === "text_delta" && event.delta.text) {
          block.text += event.delta.text;
          request.onTextDelta?.(event.delta.text);
        } else if (
          event.delta.type === "input_json_delta" &&
          event.delta.partial_json !== undefined
        ) {
          block.json += event.delta.partial_json;
        }
        break;
      }
      case "message_delta":
        stopReason = event.delta.stop_reason ?? stopReason;
        applyUsage(usage, event.usage);
        break;
      case "message_stop":
        finished = true;
        break;
      case "error":
        throw classifyStreamError({
          type: event.error.type,
          message: event.error.message ?? "unknown error",
        });
      default:
        break;
    }
  }
  if (!finished) throw new ModelError("network", "the Anthropic stream ended before message_stop");
  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
  const toolCalls: ToolCall[] = ordered
    .filter((block) => block.type === "tool_use" && block.id && block.name)
    .map((block) => ({
      id: block.id!,
      name: block.name!,
      arguments: block.json ? parseToolArguments(block.json) : (block.input ?? {}),
    }));
  return {
    text: ordered
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join(""),
    toolCalls,
    usage,
    stopReason: mapStopReason(stopReason),
  };
}

const messageJsonSchema = z
  .object({
    content: z.array(
      z
        .object({
          type: z.string(),
          text: z.string().optional(),
          id: z.string().optional(),
          name: z.string().optional(),
          input: z.unknown().optional(),
        })
        .loose(),
    ),
    stop_reason: z.string().nullish(),
    usage: usageSchema.optional(),
  })
  .loose();

function fromMessageJson(json: unknown, request: ModelRequest): ProviderResult {
  const parsed = messageJsonSchema.safeParse(json);
  if (!parsed.success) throw new ModelError("server", "the Anthropic response was not a message");
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  applyUsage(usage, parsed.data.usage);
  const text = parsed.data.content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("");
  if (text) request.onTextDelta?.(text);
  return {
    text,
    toolCalls: parsed.data.content
      .filter((block) => block.type === "tool_use" && block.id && block.name)
      .map((block) => ({
        id: block.id!,
        name: block.name!,
        arguments: isPlainObject(block.input) ? block.input : {},
      })),
    usage,
    stopReason: mapStopReason(parsed.data.stop_reason),
  };
}

/** Anthropic reports usage cumulatively: later events carry totals, so the latest value wins. */
function applyUsage(usage: Usage, raw: z.infer<typeof usageSchema> | undefined): void {
  if (!raw) return;
  if (typeof raw.input_tokens === "number") usage.inputTokens = raw.input_tokens;
  if (typeof raw.output_tokens === "number") usage.outputTokens = raw.output_tokens;
  if (typeof raw.cache_read_input_tokens === "number")
    usage.cacheReadTokens = raw.cache_read_input_tokens;
  if (typeof raw.cache_creation_input_tokens === "number")
    usage.cacheWriteTokens = raw.cache_creation_input_tokens;
}

function mapStopReason(reason: string | null | undefined): ProviderResult["stopReason"] {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "end";
    case "tool_use":
      return "tool_use";
    case "max_tokens":
      return "max_tokens";
    default:
      return "other";
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
