import type { ClientToolCall, RunEvent } from "../../durable-objects/session-api.ts";
import type { Usage } from "../../functions/agent/types.ts";
import { runErrorToHttp } from "./completion.ts";
import { responseIdSuffix } from "./responses-id.ts";
import type { ResponsesRequest } from "./responses-schema.ts";

/**
 * OpenAI's Response object for one /v1/responses turn (the shapes of the openai SDK's `Response`,
 * `ResponseOutputMessage`, `ResponseFunctionToolCall`, `ResponseUsage`), and the non-streaming
 * answer: the run's events read to their end, then one object.
 */

export interface ResponseMeta {
  id: string;
  createdAt: number;
  previousResponseId: string | null;
  request: ResponsesRequest;
}

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** OpenAI counts cached input tokens inside input_tokens; Anthropic-style usage keeps them apart. */
export function toResponsesUsage(usage: Usage | undefined): ResponsesUsage {
  const input =
    (usage?.inputTokens ?? 0) + (usage?.cacheReadTokens ?? 0) + (usage?.cacheWriteTokens ?? 0);
  const output = usage?.outputTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.cacheReadTokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

export function messageItemId(meta: ResponseMeta): string {
  return `msg_${responseIdSuffix(meta.id)}`;
}

export function messageItem(meta: ResponseMeta, text: string, status = "completed") {
  return {
    id: messageItemId(meta),
    type: "message",
    status,
    role: "assistant",
    content: status === "completed" ? [outputTextPart(text)] : [],
  };
}

export function outputTextPart(text: string) {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}

export function functionCallItem(
  meta: ResponseMeta,
  call: ClientToolCall,
  index: number,
  status = "completed",
) {
  return {
    id: `fc_${responseIdSuffix(meta.id)}_${index}`,
    type: "function_call",
    status,
    call_id: call.callId,
    name: call.name,
    arguments: status === "completed" ? call.arguments : "",
  };
}

/** The output items of a response that ended: its text (if any), then its function calls. */
export function outputItems(meta: ResponseMeta, text: string, calls: ClientToolCall[] = []) {
  return [
    ...(text ? [messageItem(meta, text)] : []),
    ...calls.map((call, index) => functionCallItem(meta, call, index)),
  ];
}

/** The Response object, with what the request asked for echoed as OpenAI echoes it. */
export function responseObject(
  meta: ResponseMeta,
  state: {
    status: "in_progress" | "completed" | "failed";
    output?: unknown[];
    usage?: Usage;
    error?: { code: string; message: string };
  },
) {
  const request = meta.request;
  return {
    id: meta.id,
    object: "response",
    created_at: Math.floor(meta.createdAt / 1000),
    status: state.status,
    ...(state.status === "completed" ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
    error: state.error ?? null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    metadata: request.metadata ?? {},
    model: request.model,
    output: state.output ?? [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: meta.previousResponseId,
    reasoning: null,
    store: true,
    temperature: request.temperature ?? null,
    text: { format: { type: "text" } },
    tool_choice: request.tool_choice ?? "auto",
    tools: (request.tools ?? []).map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    })),
    top_p: request.top_p ?? null,
    truncation: "disabled",
    usage: state.usage || state.status !== "in_progress" ? toResponsesUsage(state.usage) : null,
    user: request.user ?? null,
  };
}

const NO_REPLY = {
  type: "error",
  message: "The agent run ended without a reply",
  code: "no_reply",
} as const;

/** Non-streaming: waits for the run's end and answers with the Response (a failed run: its error). */
export async function responseJson(
  events: AsyncIterable<RunEvent>,
  meta: ResponseMeta,
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
  const calls = terminal?.type === "done" ? terminal.clientToolCalls : undefined;
  // With function calls the text is the model's own beside them, not an earlier round's.
  const text =
    terminal?.type === "done" && (terminal.text || calls?.length) ? terminal.text : streamed;
  return Response.json(
    responseObject(meta, {
      status: "completed",
      output: outputItems(meta, text, calls),
      usage: terminal?.type === "done" ? terminal.usage : undefined,
    }),
  );
}
