import * as z from "zod";
import {
  ModelError,
  type ModelRequest,
  type ThinkingBlock,
  type ToolCall,
  type Usage,
} from "../types.ts";
import { classifyStreamError } from "./errors.ts";
import { safeJson, type SseEvent } from "./http.ts";
import { parseToolArguments } from "./transcript.ts";
import type { ProviderResult } from "./types.ts";

/**
 * An Anthropic Messages answer — the SSE stream or a JSON body — into our result: text, tool
 * calls, thinking blocks (text with its signature, or redacted data, kept verbatim because the API
 * checks them when they come back with tool results), usage and the stop reason.
 */

const usageSchema = z
  .object({
    input_tokens: z.number().nullish(),
    output_tokens: z.number().nullish(),
    cache_read_input_tokens: z.number().nullish(),
    cache_creation_input_tokens: z.number().nullish(),
  })
  .loose();

const contentBlockSchema = z
  .object({
    type: z.string(),
    id: z.string().optional(),
    name: z.string().optional(),
    text: z.string().optional(),
    input: z.unknown().optional(),
    thinking: z.string().optional(),
    signature: z.string().optional(),
    data: z.string().optional(),
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
      content_block: contentBlockSchema,
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
          thinking: z.string().optional(),
          signature: z.string().optional(),
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
  signature?: string;
  data?: string;
}

export async function readMessageStream(
  events: AsyncIterable<SseEvent>,
  request: ModelRequest,
): Promise<ProviderResult> {
  const blocks = new Map<number, BlockState>();
  const usage = emptyUsage();
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
          text: block.text ?? block.thinking ?? "",
          id: block.id,
          name: block.name,
          json: "",
          input,
          signature: block.signature || undefined,
          data: block.data,
        });
        if (block.type === "text" && block.text) request.onTextDelta?.(block.text);
        break;
      }
      case "content_block_delta": {
        const block = blocks.get(event.index);
        if (!block) break;
        const delta = event.delta;
        if (delta.type === "text_delta" && delta.text) {
          block.text += delta.text;
          request.onTextDelta?.(delta.text);
        } else if (delta.type === "input_json_delta" && delta.partial_json !== undefined) {
          block.json += delta.partial_json;
        } else if (delta.type === "thinking_delta" && delta.thinking) {
          block.text += delta.thinking;
        } else if (delta.type === "signature_delta" && delta.signature) {
          block.signature = (block.signature ?? "") + delta.signature;
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
  return resultOf(ordered, usage, stopReason);
}

const messageJsonSchema = z
  .object({
    content: z.array(contentBlockSchema),
    stop_reason: z.string().nullish(),
    usage: usageSchema.optional(),
  })
  .loose();

export function fromMessageJson(json: unknown, request: ModelRequest): ProviderResult {
  const parsed = messageJsonSchema.safeParse(json);
  if (!parsed.success) throw new ModelError("server", "the Anthropic response was not a message");
  const usage = emptyUsage();
  applyUsage(usage, parsed.data.usage);
  const blocks: BlockState[] = parsed.data.content.map((block) => ({
    type: block.type,
    text: block.text ?? block.thinking ?? "",
    id: block.id,
    name: block.name,
    json: "",
    input: isPlainObject(block.input) ? block.input : {},
    signature: block.signature || undefined,
    data: block.data,
  }));
  const result = resultOf(blocks, usage, parsed.data.stop_reason);
  if (result.text) request.onTextDelta?.(result.text);
  return result;
}

function resultOf(
  blocks: BlockState[],
  usage: Usage,
  stopReason: string | null | undefined,
): ProviderResult {
  const toolCalls: ToolCall[] = blocks
    .filter((block) => block.type === "tool_use" && block.id && block.name)
    .map((block) => ({
      id: block.id!,
      name: block.name!,
      arguments: block.json ? parseToolArguments(block.json) : (block.input ?? {}),
    }));
  const thinking: ThinkingBlock[] = blocks.flatMap((block): ThinkingBlock[] => {
    if (block.type === "thinking")
      return [
        {
          type: "thinking",
          text: block.text,
          ...(block.signature ? { signature: block.signature } : {}),
        },
      ];
    if (block.type === "redacted_thinking" && block.data)
      return [{ type: "redacted", data: block.data }];
    return [];
  });
  return {
    text: blocks
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join(""),
    toolCalls,
    usage,
    stopReason: mapStopReason(stopReason),
    ...(thinking.length ? { thinking } : {}),
  };
}

function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
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
