import * as z from "zod";
import type { RunEvent } from "../../durable-objects/session-api.ts";

/**
 * Reads the NDJSON stream SessionDO.chat() returns: one RunEvent per line. Lines are validated,
 * because the stream crosses an RPC boundary; a line that is not a RunEvent ends the read with an
 * `error` event rather than being passed on half-understood.
 */

const usageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
});

export const runEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("queued") }),
  z.object({ type: z.literal("run-started"), runId: z.string() }),
  z.object({ type: z.literal("text-delta"), text: z.string() }),
  z.object({ type: z.literal("text-reset") }),
  z.object({
    type: z.literal("tool"),
    callId: z.string(),
    name: z.string(),
    phase: z.enum(["start", "end"]),
    isError: z.boolean().optional(),
    preview: z.string().optional(),
  }),
  z.object({ type: z.literal("notice"), text: z.string() }),
  z.object({
    type: z.literal("done"),
    runId: z.string(),
    text: z.string(),
    usage: usageSchema,
    modelRef: z.string(),
    media: z
      .array(z.object({ url: z.string(), name: z.string(), mimeType: z.string() }))
      .optional(),
    clientToolCalls: z
      .array(z.object({ callId: z.string(), name: z.string(), arguments: z.string() }))
      .optional(),
  }),
  z.object({ type: z.literal("error"), message: z.string(), code: z.string().optional() }),
]) satisfies z.ZodType<RunEvent>;

/** Yields events until the stream ends; a terminal `done`/`error` is always the last one yielded. */
export async function* readRunEvents(stream: ReadableStream<Uint8Array>): AsyncGenerator<RunEvent> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value) buffered += value;
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) {
          const event = parseLine(line);
          yield event;
          if (event.type === "done" || event.type === "error") return;
        }
        newline = buffered.indexOf("\n");
      }
      if (done) break;
    }
    const tail = buffered.trim();
    if (tail) yield parseLine(tail);
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function parseLine(line: string): RunEvent {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return {
      type: "error",
      message: "the session sent an unreadable event",
      code: "bad_run_event",
    };
  }
  const parsed = runEventSchema.safeParse(json);
  return parsed.success
    ? parsed.data
    : { type: "error", message: "the session sent an unknown event", code: "bad_run_event" };
}
