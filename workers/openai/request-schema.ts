import * as z from "zod";

/**
 * The body of POST /v1/chat/completions, validated field by field with the ranges the OpenClaw
 * doc gives ("Chat 工具契约"). Unknown top-level fields are tolerated (clients send `metadata`,
 * `store`, …); wrong values in known fields are a 400 that names the field.
 */

const textPartSchema = z.object({ type: z.literal("text"), text: z.string() }).loose();
const imagePartSchema = z
  .object({
    type: z.literal("image_url"),
    image_url: z.union([
      z.string(),
      z.object({ url: z.string(), detail: z.string().optional() }).loose(),
    ]),
  })
  .loose();
const contentPartSchema = z.discriminatedUnion("type", [textPartSchema, imagePartSchema]);
export type ContentPart = z.infer<typeof contentPartSchema>;

const contentSchema = z.union([z.string(), z.array(contentPartSchema)]);

const toolCallSchema = z
  .object({
    id: z.string(),
    type: z.literal("function"),
    function: z.object({ name: z.string(), arguments: z.string() }).loose(),
  })
  .loose();

const messageSchema = z.discriminatedUnion("role", [
  z
    .object({ role: z.literal("system"), content: contentSchema, name: z.string().optional() })
    .loose(),
  z
    .object({ role: z.literal("developer"), content: contentSchema, name: z.string().optional() })
    .loose(),
  z
    .object({ role: z.literal("user"), content: contentSchema, name: z.string().optional() })
    .loose(),
  z
    .object({
      role: z.literal("assistant"),
      content: contentSchema.nullish(),
      name: z.string().optional(),
      tool_calls: z.array(toolCallSchema).optional(),
    })
    .loose(),
  z
    .object({ role: z.literal("tool"), content: contentSchema, tool_call_id: z.string().min(1) })
    .loose(),
]);
export type ChatMessage = z.infer<typeof messageSchema>;

const functionToolSchema = z
  .object({
    type: z.literal("function"),
    function: z
      .object({
        name: z.string().min(1),
        description: z.string().optional(),
        parameters: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullish(),
      })
      .loose(),
  })
  .loose();

const toolChoiceSchema = z.union([
  z.enum(["auto", "none", "required"]),
  z
    .object({ type: z.literal("function"), function: z.object({ name: z.string().min(1) }) })
    .loose(),
]);

const positiveSafeInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const chatCompletionRequestSchema = z
  .object({
    model: z.string().min(1).max(256).default("openclaw"),
    messages: z.array(messageSchema).min(1, { message: "must contain at least one message" }),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullish(),
    user: z.string().trim().min(1).max(256).optional(),
    n: z.literal(1, { message: "only n=1 is supported" }).nullish(),
    tools: z.array(functionToolSchema).optional(),
    tool_choice: toolChoiceSchema.optional(),
    max_completion_tokens: positiveSafeInt.nullish(),
    max_tokens: positiveSafeInt.nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    seed: z.number().int().nullish(),
    stop: z
      .union([
        z.string().min(1),
        z.array(z.string().min(1)).max(4, { message: "at most 4 stop sequences" }),
      ])
      .nullish(),
  })
  .loose();

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

/** Formats the first zod issue as `Invalid \`messages.0.role\`: …` plus the dotted field path. */
export function describeIssue(error: z.ZodError): { message: string; param: string | null } {
  const issue = error.issues[0];
  if (!issue) return { message: "Invalid request body", param: null };
  const param = issue.path.length ? issue.path.map(String).join(".") : null;
  return {
    message: param
      ? `Invalid \`${param}\`: ${issue.message}`
      : `Invalid request body: ${issue.message}`,
    param,
  };
}
