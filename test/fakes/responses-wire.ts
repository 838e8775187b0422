import { dataUrlImageProblem, pdfBytesProblem } from "./model-images.ts";
import type { FakeStreamWriter, Plan, ScriptedStep } from "./model-steps.ts";

/**
 * The fake model server's OpenAI Responses API (`POST /v1/responses`), in OpenAI's wire format:
 * streamed as `event: <type>` + `data: {type, sequence_number, …}` — response.created, output
 * items added/done, response.output_text.delta, response.function_call_arguments.delta/.done,
 * response.reasoning_summary_text.delta when the request asks for a summary, and
 * response.completed (or response.incomplete for max_output_tokens) with usage whose input_tokens
 * include input_tokens_details.cached_tokens. Errors use OpenAI's `{ error: { message, type,
 * param, code } }` envelope. Requests the real API refuses are refused with a 400: no model, Chat
 * Completions parameters (`messages`, `max_tokens`), a tool without a top-level name, an unknown
 * reasoning effort, malformed input items and images, and a function_call_output whose call_id no
 * function_call before it carries.
 */

type Json = Record<string, unknown>;

const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"];
const USER_PARTS = ["input_text", "input_image", "input_file"];

export function isResponsesRoute(method: string | undefined, pathname: string): boolean {
  return method === "POST" && /\/responses$/.test(pathname);
}

export function responsesProblem(body: Json): { message: string; param?: string } | undefined {
  if (typeof body.model !== "string")
    return { message: "Missing required parameter: 'model'.", param: "model" };
  if (body.messages !== undefined)
    return { message: "Unsupported parameter: 'messages'.", param: "messages" };
  if (body.max_tokens !== undefined)
    return {
      message:
        "Unsupported parameter: 'max_tokens'. In the Responses API, this parameter has moved to 'max_output_tokens'.",
      param: "max_tokens",
    };
  for (const [t, tool] of (Array.isArray(body.tools) ? (body.tools as Json[]) : []).entries())
    if (tool.type === "function" && typeof tool.name !== "string")
      return {
        message: `Missing required parameter: 'tools[${t}].name'.`,
        param: `tools[${t}].name`,
      };
  const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  if (effort !== undefined && !EFFORTS.includes(String(effort)))
    return {
      message: `Invalid value: '${String(effort)}'. Supported values are: ${EFFORTS.map((e) => `'${e}'`).join(", ")}.`,
      param: "reasoning.effort",
    };
  if (typeof body.input === "string") return undefined;
  if (!Array.isArray(body.input)) return { message: "Invalid type for 'input'.", param: "input" };
  const calls = new Set<string>();
  for (const [i, item] of (body.input as Json[]).entries()) {
    const problem = itemProblem(item, `input[${i}]`, calls);
    if (problem) return problem;
  }
  return undefined;
}

function itemProblem(
  item: Json,
  where: string,
  calls: Set<string>,
): { message: string; param?: string } | undefined {
  if (item.type === "function_call") {
    if (typeof item.call_id !== "string" || typeof item.name !== "string")
      return { message: `Missing required parameter: '${where}.call_id'.`, param: where };
    if (typeof item.arguments !== "string")
      return { message: `Invalid type for '${where}.arguments': expected a string.`, param: where };
    calls.add(item.call_id);
    return undefined;
  }
  if (item.type === "function_call_output") {
    if (!calls.has(String(item.call_id)))
      return {
        message: `No tool call found for function call output with call_id ${String(item.call_id)}.`,
        param: "input",
      };
    if (typeof item.output !== "string" && !Array.isArray(item.output))
      return { message: `Invalid type for '${where}.output'.`, param: where };
    return undefined;
  }
  if (item.type !== undefined && item.type !== "message")
    return { message: `Invalid value: '${String(item.type)}'.`, param: `${where}.type` };
  if (!["user", "assistant", "system", "developer"].includes(String(item.role)))
    return { message: `Invalid value: '${String(item.role)}'.`, param: `${where}.role` };
  if (typeof item.content === "string") return undefined;
  if (!Array.isArray(item.content))
    return { message: `Missing required parameter: '${where}.content'.` };
  for (const [c, part] of (item.content as Json[]).entries()) {
    const at = `${where}.content[${c}]`;
    const allowed = item.role === "assistant" ? ["output_text", "refusal"] : USER_PARTS;
    if (!allowed.includes(String(part.type)))
      return { message: `Invalid value: '${String(part.type)}'.`, param: `${at}.type` };
    if (part.type === "input_file") {
      const match = /^data:application\/pdf;base64,(.*)$/s.exec(String(part.file_data ?? ""));
      const problem = match ? pdfBytesProblem(match[1]!) : "expected a base64 data URL of a PDF";
      if (problem || typeof part.filename !== "string")
        return {
          message: `Invalid '${at}.file_data': ${problem ?? "filename is required"}`,
          param: `${at}.file_data`,
        };
    }
    if (part.type === "input_image") {
      const problem = dataUrlImageProblem(part.image_url);
      if (problem)
        return { message: `Invalid '${at}.image_url': ${problem}`, param: `${at}.image_url` };
    }
  }
  return undefined;
}

/** Reasoning text only when the request asks for a summary of it. */
export function responsesSummaryAsked(body: Json): boolean {
  return isRecord(body.reasoning) && body.reasoning.summary !== undefined;
}

export function responsesLastUserText(body: Json): string {
  if (typeof body.input === "string") return body.input;
  const items = Array.isArray(body.input) ? (body.input as Json[]) : [];
  for (const item of [...items].reverse()) {
    if (item.role !== "user") continue;
    if (typeof item.content === "string") return item.content;
    const text = ((item.content as Json[]) ?? [])
      .filter((part) => part.type === "input_text")
      .map((part) => String(part.text))
      .join("\n");
    if (text) return text;
  }
  return "";
}

function usageOf(plan: Plan): Json {
  return {
    input_tokens: plan.usage.input + plan.usage.cacheRead,
    input_tokens_details: { cached_tokens: plan.usage.cacheRead },
    output_tokens: plan.usage.output,
    output_tokens_details: {
      reasoning_tokens: plan.thinking ? Math.ceil(plan.thinking.text.length / 4) : 0,
    },
    total_tokens: plan.usage.input + plan.usage.cacheRead + plan.usage.output,
  };
}

function outputItems(plan: Plan, id: string): Json[] {
  const text = plan.textChunks.join("");
  return [
    ...(plan.thinking
      ? [
          {
            type: "reasoning",
            id: `rs_${id}`,
            summary: [{ type: "summary_text", text: plan.thinking.text }],
          },
        ]
      : []),
    ...(text
      ? [
          {
            type: "message",
            id: `msg_${id}`,
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text, annotations: [] }],
          },
        ]
      : []),
    ...plan.calls.map((call, index) => ({
      type: "function_call",
      id: `fc_${id}_${index}`,
      call_id: call.id,
      name: call.name,
      arguments: call.fragments.join(""),
      status: "completed",
    })),
  ];
}

function envelope(plan: Plan, model: string, id: string, status: string): Json {
  return {
    id: `resp_${id}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output: status === "in_progress" ? [] : outputItems(plan, id),
    usage: status === "in_progress" ? null : usageOf(plan),
    ...(status === "incomplete" ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
  };
}

export function responsesJson(plan: Plan, model: string): Json {
  const id = String(Date.now());
  return envelope(plan, model, id, plan.stop === "max_tokens" ? "incomplete" : "completed");
}

export async function streamResponses(
  writer: FakeStreamWriter,
  plan: Plan,
  model: string,
  step: ScriptedStep,
): Promise<void> {
  const id = String(Date.now());
  let sequence = 0;
  const send = (type: string, payload: Json) =>
    writer.event(type, { type, sequence_number: sequence++, ...payload });
  await send("response.created", { response: envelope(plan, model, id, "in_progress") });
  const items = outputItems(plan, id);
  for (const [index, item] of items.entries()) {
    if (item.type === "reasoning") {
      await send("response.output_item.added", {
        output_index: index,
        item: { ...item, summary: [] },
      });
      for (const piece of [plan.thinking?.text ?? ""])
        await send("response.reasoning_summary_text.delta", {
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          delta: piece,
        });
    }
    if (item.type === "message") {
      await send("response.output_item.added", {
        output_index: index,
        item: { ...item, content: [], status: "in_progress" },
      });
      for (const piece of plan.textChunks)
        await send("response.output_text.delta", {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: piece,
        });
      if (step.type === "stall") return writer.stall();
      if (step.type === "truncate") return writer.end();
      if (step.type === "stream_error") return streamFailure(send, step, writer);
    }
    if (item.type === "function_call") {
      const call = plan.calls[index - (items.length - plan.calls.length)]!;
      await send("response.output_item.added", {
        output_index: index,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      for (const fragment of call.fragments)
        await send("response.function_call_arguments.delta", {
          item_id: item.id,
          output_index: index,
          delta: fragment,
        });
      await send("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: index,
        arguments: item.arguments,
      });
    }
    await send("response.output_item.done", { output_index: index, item });
  }
  if (step.type === "stall") return writer.stall();
  if (step.type === "truncate") return writer.end();
  if (step.type === "stream_error") return streamFailure(send, step, writer);
  const incomplete = plan.stop === "max_tokens";
  await send(incomplete ? "response.incomplete" : "response.completed", {
    response: envelope(plan, model, id, incomplete ? "incomplete" : "completed"),
  });
  writer.end();
}

async function streamFailure(
  send: (type: string, payload: Json) => Promise<void>,
  step: Extract<ScriptedStep, { type: "stream_error" }>,
  writer: FakeStreamWriter,
): Promise<void> {
  await send("response.failed", {
    response: {
      status: "failed",
      error: { code: step.errorType, message: step.message ?? step.errorType },
    },
  });
  writer.end();
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
