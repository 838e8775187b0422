import type { RunEvent } from "../../durable-objects/session-api.ts";
import type { Usage } from "../../functions/agent/types.ts";
import { SSE_HEADERS, sseStream, type SseWriter } from "../sse.ts";
import { OpenAIHttpError } from "./errors.ts";

/**
 * Turns the RunEvents of one agent run into OpenAI's Chat Completions wire format: a single
 * `chat.completion` object, or `chat.completion.chunk` SSE events ending with `data: [DONE]`.
 */

export interface CompletionMeta {
  id: string;
  created: number;
  /** Echoed back as the client sent it (an agent target such as `openclaw/default`). */
  model: string;
  includeUsage: boolean;
  /**
   * edgeclaw's web chat asks (header `x-edgeclaw-events: tools`) for tool activity and run status
   * as named SSE events (`event: tool`, `event: status`). OpenAI clients never get them.
   */
  surfaceEvents: boolean;
}

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

/** OpenAI counts cached prompt tokens inside prompt_tokens; Anthropic-style usage keeps them apart. */
export function toOpenAIUsage(usage: Usage | undefined): OpenAIUsage {
  const prompt =
    (usage?.inputTokens ?? 0) + (usage?.cacheReadTokens ?? 0) + (usage?.cacheWriteTokens ?? 0);
  const completion = usage?.outputTokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage?.cacheReadTokens ?? 0 },
  };
}

/** A run that failed, as the HTTP error an OpenAI client understands. */
export function runErrorToHttp(event: Extract<RunEvent, { type: "error" }>): OpenAIHttpError {
  if (event.code === "not_configured")
    return new OpenAIHttpError(503, event.message, "api_error", "not_configured");
  if (event.code === "queue_full" || event.code === "rate_limit") {
    return new OpenAIHttpError(429, event.message, "rate_limit_error", event.code);
  }
  return new OpenAIHttpError(502, event.message, "api_error", event.code ?? "run_failed");
}

const NO_REPLY = {
  type: "error",
  message: "The agent run ended without a reply",
  code: "no_reply",
} as const;

/** Non-streaming: waits for the run to end and answers with one `chat.completion`. */
export async function completionResponse(
  events: AsyncIterable<RunEvent>,
  meta: CompletionMeta,
): Promise<Response> {
  let streamed = "";
  let terminal: Extract<RunEvent, { type: "done" | "error" }> | undefined;
  for await (const event of events) {
    if (event.type === "text-delta") streamed += event.text;
    else if (event.type === "text-reset") streamed = "";
    else if (event.type === "notice") streamed += event.text;
    else if (event.type === "done" || event.type === "error") {
      terminal = event;
      break;
    }
  }
  if (!terminal && !streamed) terminal = NO_REPLY;
  if (terminal?.type === "error") throw runErrorToHttp(terminal);
  const content = terminal?.type === "done" && terminal.text ? terminal.text : streamed;
  return Response.json({
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: toOpenAIUsage(terminal?.usage),
  });
}

const KEEPALIVE_MS = 15_000;

/** Streaming: role delta, content deltas, final chunk, optional usage chunk, `data: [DONE]`. */
export function streamingResponse(
  events: AsyncGenerator<RunEvent>,
  meta: CompletionMeta,
): Response {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  let keepalive: ReturnType<typeof setInterval> | undefined;

  const body = sseStream(
    async (writer) => {
      keepalive = setInterval(() => writer.comment("keepalive"), KEEPALIVE_MS);
      try {
        await writeRun(writer);
      } finally {
        clearInterval(keepalive);
      }
    },
    (error, writer) => {
      const httpError =
        error instanceof OpenAIHttpError
          ? error
          : new OpenAIHttpError(502, "The agent run failed", "api_error", "run_failed");
      sendError(writer, httpError);
    },
    () => {
      if (keepalive !== undefined) clearInterval(keepalive);
      void events.return(undefined);
    },
  );
  return new Response(body, { headers: SSE_HEADERS });

  async function writeRun(writer: SseWriter): Promise<void> {
    writer.send(chunk({ role: "assistant", content: "" }));
    let sentContent = false;
    // Text from the model step after a tool call starts a new paragraph, not mid-sentence.
    let paragraphBreak = false;
    let terminal: Extract<RunEvent, { type: "done" | "error" }> | undefined;
    for await (const event of events) {
      if (writer.closed) break;
      if (event.type === "text-delta" || event.type === "notice") {
        if (event.text) {
          writer.send(
            chunk({ content: paragraphBreak && sentContent ? `\n\n${event.text}` : event.text }),
          );
          sentContent = true;
          paragraphBreak = false;
        }
      } else if (event.type === "text-reset") {
        // A failed model attempt streamed text that a retry replaces. The web chat clears it; an
        // OpenAI stream cannot take chunks back, so there the retried answer starts a new paragraph.
        if (meta.surfaceEvents) {
          writer.send({ state: "reset" }, "status");
          sentContent = false;
        } else if (sentContent) {
          writer.send(chunk({ content: "\n\n" }));
        }
      } else if (event.type === "tool") {
        paragraphBreak = true;
        if (meta.surfaceEvents) writer.send(toolPayload(event), "tool");
      } else if (event.type === "queued" || event.type === "run-started") {
        if (meta.surfaceEvents)
          writer.send({ state: event.type === "queued" ? "queued" : "running" }, "status");
      } else {
        terminal = event;
        break;
      }
    }
    if (!terminal && !sentContent) terminal = NO_REPLY;
    if (terminal?.type === "error") {
      sendError(writer, runErrorToHttp(terminal));
      return;
    }
    if (terminal?.type === "done" && !sentContent && terminal.text)
      writer.send(chunk({ content: terminal.text }));
    writer.send(chunk({}, "stop"));
    if (meta.surfaceEvents && terminal?.type === "done")
      writer.send(
        {
          state: "done",
          modelRef: terminal.modelRef,
          ...(terminal.media?.length ? { media: terminal.media } : {}),
        },
        "status",
      );
    if (meta.includeUsage) {
      writer.send({
        ...chunk({}),
        choices: [],
        usage: toOpenAIUsage(terminal?.type === "done" ? terminal.usage : undefined),
      });
    }
    writer.send("[DONE]");
  }
}

function sendError(writer: SseWriter, error: OpenAIHttpError): void {
  writer.send(error.body());
  writer.send("[DONE]");
}

function toolPayload(event: Extract<RunEvent, { type: "tool" }>) {
  return {
    callId: event.callId,
    name: event.name,
    phase: event.phase,
    isError: event.isError ?? false,
    preview: event.preview,
  };
}
