import * as z from "zod";

/**
 * The body of POST /v1/responses: the fields OpenClaw's OpenResponses page lists, in OpenAI's
 * Responses wire format. Unlike chat completions, an unknown top-level field is refused (400
 * naming it), so a client never gets an answer that silently ignored what it asked for; the
 * fields OpenClaw accepts and ignores (`store`, `reasoning`, `truncation`, `max_tool_calls`, …)
 * are listed here and documented as ignored.
 */

const inputTextSchema = z.object({ type: z.literal("input_text"), text: z.string() }).loose();
/** What an assistant turn the caller sends back holds (earlier output it echoes as context). */
const outputTextSchema = z.object({ type: z.literal("output_text"), text: z.string() }).loose();
const refusalSchema = z.object({ type: z.literal("refusal"), refusal: z.string() }).loose();
const inputImageSchema = z
  .object({
    type: z.literal("input_image"),
    image_url: z.string().nullish(),
    file_id: z.string().nullish(),
    detail: z.string().nullish(),
    /** OpenClaw's form: `{ type: "base64", media_type, data }` or `{ type: "url", url }`. */
    source: z
      .union([
        z.object({ type: z.literal("base64"), media_type: z.string(), data: z.string() }).loose(),
        z.object({ type: z.literal("url"), url: z.string() }).loose(),
      ])
      .optional(),
  })
  .loose();
const inputFileSchema = z.object({ type: z.literal("input_file") }).loose();

const contentPartSchema = z.discriminatedUnion("type", [
  inputTextSchema,
  outputTextSchema,
  refusalSchema,
  inputImageSchema,
  inputFileSchema,
]);
export type ResponsesContentPart = z.infer<typeof contentPartSchema>;

const messageItemSchema = z
  .object({
    type: z.literal("message").optional(),
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.union([z.string(), z.array(contentPartSchema)]),
  })
  .loose();

export type ResponsesMessageItem = z.infer<typeof messageItemSchema>;

const functionCallOutputSchema = z
  .object({
    type: z.literal("function_call_output"),
    call_id: z.string().min(1).max(256),
    output: z.union([
      z.string(),
      z.array(z.discriminatedUnion("type", [inputTextSchema, inputImageSchema, inputFileSchema])),
    ]),
  })
  .loose();

/** Items a client sends back from an earlier response, or for schema compatibility: not prompted. */
const ignoredItemSchema = z
  .object({ type: z.enum(["function_call", "reasoning", "item_reference"]) })
  .loose();

const inputItemSchema = z.union([functionCallOutputSchema, ignoredItemSchema, messageItemSchema]);
export type ResponsesInputItem = z.infer<typeof inputItemSchema>;

const functionToolSchema = z
  .object({
    type: z.literal("function"),
    name: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{1,64}$/, { message: "must be 1-64 letters, digits, _ or -" }),
    description: z.string().max(4096).nullish(),
    parameters: z
      .object({ type: z.literal("object", { message: "must be an object schema" }) })
      .loose()
      .nullish(),
    strict: z.boolean().nullish(),
  })
  .loose();

const toolSchema = z.custom<z.infer<typeof functionToolSchema>>(
  (value) => functionToolSchema.safeParse(value).success,
  { message: 'only `{ "type": "function", name, parameters }` tools are supported' },
);

const metadataSchema = z
  .record(z.string().max(64), z.string().max(512))
  .refine((value) => Object.keys(value).length <= 16, { message: "at most 16 keys" });

export const responsesRequestSchema = z
  .object({
    model: z.string().min(1).max(256).default("openclaw"),
    input: z.union([
      z.string(),
      z.array(inputItemSchema).min(1, { message: "must contain at least one item" }),
    ]),
    instructions: z.string().max(200_000).nullish(),
    tools: z.array(toolSchema).max(128).optional(),
    tool_choice: z
      .enum(["auto", "none"], {
        message:
          'only "auto" and "none" are supported (the agent decides when it calls a client tool)',
      })
      .optional(),
    stream: z.boolean().nullish(),
    user: z.string().trim().min(1).max(256).optional(),
    previous_response_id: z.string().min(1).max(2048).nullish(),
    metadata: metadataSchema.nullish(),
    max_output_tokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    // Accepted and ignored, as in OpenClaw.
    store: z.boolean().nullish(),
    max_tool_calls: z.number().int().positive().nullish(),
    reasoning: z.object({}).loose().nullish(),
    truncation: z.enum(["auto", "disabled"]).nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    background: z.literal(false, { message: "background responses are not supported" }).nullish(),
    text: z
      .object({
        format: z
          .object({ type: z.literal("text", { message: "only text output is supported" }) })
          .loose()
          .optional(),
      })
      .loose()
      .nullish(),
  })
  .strict();

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type FunctionTool = z.infer<typeof functionToolSchema>;

/** The first issue as OpenAI words it: the field, or `Unsupported parameter: 'x'`. */
export function describeResponsesIssue(error: z.ZodError): {
  message: string;
  param: string | null;
  code: string | null;
} {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request body", param: null, code: null };
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    return {
      message: `Unsupported parameter: '${key}'. This gateway does not support it on /v1/responses.`,
      param: key,
      code: "unsupported_parameter",
    };
  }
  const param = issue.path.length ? issue.path.map(String).join(".") : null;
  return {
    message: param
      ? `Invalid \`${param}\`: ${issue.message}`
      : `Invalid request body: ${issue.message}`,
    param,
    code: null,
  };
}
