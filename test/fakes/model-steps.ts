import * as z from "zod";

/**
 * What a test scripts the fake model server to answer (`POST /_control/script`), and the plan of one
 * answer that each wire format (model-server.ts for Anthropic and Chat Completions, gemini-wire.ts,
 * responses-wire.ts) writes in its own shape. A file of its own so the wire-format files and the
 * server share these types without importing each other.
 */

const usageSchema = z.object({
  input: z.number().int().nonnegative().optional(),
  output: z.number().int().nonnegative().optional(),
  cacheRead: z.number().int().nonnegative().optional(),
  cacheWrite: z.number().int().nonnegative().optional(),
});

const timing = {
  /** Wait before the status line (first byte). */
  delayMs: z.number().int().nonnegative().optional(),
  /** Wait between streamed chunks. */
  chunkDelayMs: z.number().int().nonnegative().optional(),
};

/** An HTTP error in the wire format's own envelope. */
export const errorStepSchema = z.object({
  type: z.literal("error"),
  status: z.number().int().min(400).max(599),
  errorType: z.string().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Sent verbatim instead of the format's error envelope. */
  rawBody: z.string().optional(),
  /** Gemini: a RetryInfo with this retryDelay ("37s") in the error's details. */
  retryDelay: z.string().optional(),
  ...timing,
});

export const stepSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("text"),
    text: z.string(),
    /** Stream exactly these pieces (they should join to `text`); default: split in ~3 pieces. */
    chunks: z.array(z.string()).optional(),
    usage: usageSchema.optional(),
    stopReason: z.enum(["end", "max_tokens"]).optional(),
    /** The model's thinking, sent when the request asks for it (Anthropic thinking, OpenAI reasoning_effort). */
    thinking: z.string().optional(),
    ...timing,
  }),
  z.object({
    type: z.literal("tool_calls"),
    text: z.string().optional(),
    calls: z.array(
      z.object({
        id: z.string().optional(),
        name: z.string(),
        /** An object is serialised; a string is sent verbatim (to test malformed JSON). */
        arguments: z.union([z.record(z.string(), z.unknown()), z.string()]),
        /** Split the argument JSON into this many fragments (input_json_delta / tool_calls deltas). */
        fragments: z.number().int().positive().optional(),
      }),
    ),
    usage: usageSchema.optional(),
    thinking: z.string().optional(),
    ...timing,
  }),
  errorStepSchema,
  /** Never answers: no status line, no bytes (first-byte timeout). */
  z.object({ type: z.literal("hang") }),
  /** Starts streaming `text`, then goes silent without ending (idle timeout). */
  z.object({ type: z.literal("stall"), text: z.string().default(""), ...timing }),
  /** Streams `text`, then reports an error inside the 200 stream. */
  z.object({
    type: z.literal("stream_error"),
    text: z.string().default(""),
    errorType: z.string(),
    message: z.string().optional(),
    ...timing,
  }),
  /** Streams `text`, then closes the connection without the terminal event. */
  z.object({ type: z.literal("truncate"), text: z.string().default(""), ...timing }),
]);

export type FakeModelStep = z.input<typeof stepSchema>;
export type ScriptedStep = z.output<typeof stepSchema>;
type Step = ScriptedStep;
export type FakeErrorStep = Extract<Step, { type: "error" }>;
export interface FakeStreamWriter {
  event(name: string, payload: unknown): Promise<void>;
  raw(text: string): Promise<void>;
  stall(): void;
  end(): void;
}

export interface Plan {
  /** Anthropic: a signed thinking block first; OpenAI: reasoning_content deltas. */
  thinking?: { text: string; signature: string };
  textChunks: string[];
  calls: Array<{ id: string; name: string; fragments: string[] }>;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
  stop: "end" | "max_tokens" | "tool_use";
}
