import type { Message, ModelRequest } from "../types.ts";
import { anthropicThinkingFields } from "./anthropic-thinking.ts";
import { fromMessageJson, readMessageStream } from "./anthropic-response.ts";
import { postToProvider } from "./http.ts";
import { sanitizeTranscript } from "./transcript.ts";
import type { ProviderCall, ResolvedModel } from "./types.ts";

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
  | {
      type: "document";
      source: { type: "base64"; media_type: "application/pdf"; data: string };
      title?: string;
    }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: boolean };

interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

export function anthropicRequestBody(
  model: ResolvedModel,
  request: ModelRequest,
): Record<string, unknown> {
  const maxTokens = request.maxTokens ?? model.maxTokens;
  let thinking = anthropicThinkingFields(model.modelId, request.thinkLevel, maxTokens);
  let messages = toAnthropicMessages(request.messages, { withThinking: !!thinking.thinking });
  // Thinking cannot start in the middle of a tool round: the API wants the assistant turn whose
  // tool results come next to begin with its thinking, so a round begun without it ends without it.
  if (thinking.thinking && openRoundLacksThinking(messages)) {
    thinking = {};
    messages = toAnthropicMessages(request.messages, { withThinking: false });
  }
  const body: Record<string, unknown> = {
    model: model.modelId,
    max_tokens: maxTokens,
    stream: true,
    messages,
    ...thinking,
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

/**
 * Our transcript → Anthropic turns: tool results ride in user turns, consecutive same-role turns
 * merge. With thinking on, each assistant turn's signed thinking blocks lead it, unchanged;
 * without, they are left out (a request without thinking must not carry them).
 */
export function toAnthropicMessages(
  messages: Message[],
  options: { withThinking?: boolean } = {},
): AnthropicMessage[] {
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
      // PDFs first, as Anthropic's PDF guide places them (each is a document block with its title).
      const documents: AnthropicBlock[] = (message.documents ?? []).map((document) => ({
        type: "document",
        source: { type: "base64", media_type: document.mimeType, data: document.data },
        ...(document.name ? { title: document.name } : {}),
      }));
      push("user", [
        ...documents,
        ...images,
        { type: "text", text: message.content || "(empty message)" },
      ]);
    } else if (message.role === "assistant") {
      const blocks: AnthropicBlock[] = options.withThinking ? thinkingBlocks(message) : [];
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

/** The blocks Anthropic signed; unsigned reasoning from another provider never goes back to it. */
function thinkingBlocks(message: Extract<Message, { role: "assistant" }>): AnthropicBlock[] {
  return (message.thinking ?? []).flatMap((block): AnthropicBlock[] => {
    if (block.type === "redacted") return [{ type: "redacted_thinking", data: block.data }];
    return block.signature
      ? [{ type: "thinking", thinking: block.text, signature: block.signature }]
      : [];
  });
}

/** The last turn is tool results answering an assistant turn that has no thinking block. */
function openRoundLacksThinking(messages: AnthropicMessage[]): boolean {
  const last = messages.at(-1);
  const answered = messages.at(-2);
  if (last?.role !== "user" || answered?.role !== "assistant") return false;
  if (!last.content.some((block) => block.type === "tool_result")) return false;
  const first = answered.content[0];
  return first?.type !== "thinking" && first?.type !== "redacted_thinking";
}
