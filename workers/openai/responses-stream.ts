import type { RunEvent } from "../../durable-objects/session-api.ts";
import { SSE_HEADERS, sseStream, type SseWriter } from "../sse.ts";
import { runErrorToHttp } from "./completion.ts";
import { OpenAIHttpError } from "./errors.ts";
import {
  functionCallItem,
  messageItem,
  messageItemId,
  outputTextPart,
  responseObject,
  type ResponseMeta,
} from "./responses-output.ts";

/**
 * Streaming /v1/responses: the run's events as OpenAI's Responses stream events, each sent as
 * `event: <type>` + `data: <json>` with a `sequence_number` counting from 0:
 * response.created, response.in_progress; for the answer's text response.output_item.added,
 * response.content_part.added, response.output_text.delta …, response.output_text.done,
 * response.content_part.done, response.output_item.done; for each client function call
 * response.output_item.added, response.function_call_arguments.delta / .done,
 * response.output_item.done; then response.completed (or response.failed) and `data: [DONE]`.
 * The message's text is what was streamed: text of a model step before a tool round stays, and the
 * next step's text starts a new paragraph, as on chat completions.
 */

const KEEPALIVE_MS = 15_000;

export function responseStream(events: AsyncGenerator<RunEvent>, meta: ResponseMeta): Response {
  let keepalive: ReturnType<typeof setInterval> | undefined;
  const body = sseStream(
    async (writer) => {
      keepalive = setInterval(() => writer.comment("keepalive"), KEEPALIVE_MS);
      try {
        await writeRun(writer, events, meta);
      } finally {
        clearInterval(keepalive);
      }
    },
    (error, writer) => {
      const httpError =
        error instanceof OpenAIHttpError
          ? error
          : new OpenAIHttpError(502, "The agent run failed", "api_error", "run_failed");
      // Nothing more can be numbered reliably here: a failure event of its own, then the end.
      writer.send(
        {
          type: "response.failed",
          sequence_number: 0,
          response: responseObject(meta, {
            status: "failed",
            error: { code: httpError.code ?? "run_failed", message: httpError.message },
          }),
        },
        "response.failed",
      );
      writer.send("[DONE]");
    },
    () => {
      if (keepalive !== undefined) clearInterval(keepalive);
      void events.return(undefined);
    },
  );
  return new Response(body, { headers: SSE_HEADERS });
}

async function writeRun(
  writer: SseWriter,
  events: AsyncGenerator<RunEvent>,
  meta: ResponseMeta,
): Promise<void> {
  let sequence = 0;
  const send = (type: string, payload: Record<string, unknown>) =>
    writer.send({ type, sequence_number: sequence++, ...payload }, type);
  const itemId = messageItemId(meta);
  const textRef = { item_id: itemId, output_index: 0, content_index: 0 };

  send("response.created", { response: responseObject(meta, { status: "in_progress" }) });
  send("response.in_progress", { response: responseObject(meta, { status: "in_progress" }) });

  let text = "";
  let opened = false;
  let paragraphBreak = false;
  const delta = (piece: string) => {
    if (!opened) {
      opened = true;
      send("response.output_item.added", {
        output_index: 0,
        item: messageItem(meta, "", "in_progress"),
      });
      send("response.content_part.added", { ...textRef, part: outputTextPart("") });
    }
    text += piece;
    send("response.output_text.delta", { ...textRef, delta: piece, logprobs: [] });
  };

  let terminal: Extract<RunEvent, { type: "done" | "error" }> | undefined;
  for await (const event of events) {
    if (writer.closed) return;
    if (event.type === "text-delta" || event.type === "notice") {
      if (!event.text) continue;
      delta(paragraphBreak && text ? `\n\n${event.text}` : event.text);
      paragraphBreak = false;
    } else if (event.type === "text-reset" || event.type === "tool") {
      // A retried model attempt or a tool round: a stream cannot take text back, so the next
      // text starts a new paragraph.
      paragraphBreak = true;
    } else if (event.type === "done" || event.type === "error") {
      terminal = event;
      break;
    }
  }
  if (!terminal && !text)
    terminal = { type: "error", message: "The agent run ended without a reply", code: "no_reply" };
  if (terminal?.type === "error") {
    const error = runErrorToHttp(terminal);
    send("response.failed", {
      response: responseObject(meta, {
        status: "failed",
        error: { code: error.code ?? "run_failed", message: error.message },
      }),
    });
    writer.send("[DONE]");
    return;
  }
  const calls = terminal?.clientToolCalls ?? [];
  if (!opened && terminal?.text) delta(terminal.text);
  const output: unknown[] = [];
  if (opened) {
    send("response.output_text.done", { ...textRef, text, logprobs: [] });
    send("response.content_part.done", { ...textRef, part: outputTextPart(text) });
    const item = messageItem(meta, text);
    send("response.output_item.done", { output_index: 0, item });
    output.push(item);
  }
  for (const [index, call] of calls.entries()) {
    const outputIndex = output.length;
    const added = functionCallItem(meta, call, index, "in_progress");
    send("response.output_item.added", { output_index: outputIndex, item: added });
    const ref = { item_id: added.id, output_index: outputIndex };
    send("response.function_call_arguments.delta", { ...ref, delta: call.arguments });
    send("response.function_call_arguments.done", {
      ...ref,
      name: call.name,
      arguments: call.arguments,
    });
    const item = functionCallItem(meta, call, index);
    send("response.output_item.done", { output_index: outputIndex, item });
    output.push(item);
  }
  send("response.completed", {
    response: responseObject(meta, { status: "completed", output, usage: terminal?.usage }),
  });
  writer.send("[DONE]");
}
