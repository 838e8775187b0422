import type { ServerResponse } from "node:http";
import { imageBytesProblem, pdfBytesProblem } from "./model-images.ts";
import type { FakeErrorStep, FakeStreamWriter, Plan, ScriptedStep } from "./model-steps.ts";

/**
 * The fake model server's Gemini API (`POST /models/{model}:streamGenerateContent?alt=sse` and
 * `:generateContent`), in Google's wire format: every SSE event a whole GenerateContentResponse,
 * the last with finishReason and usageMetadata (promptTokenCount includes cachedContentTokenCount,
 * thoughtsTokenCount beside candidatesTokenCount). Errors are Google's envelope `{ error: { code,
 * message, status, details } }`, a 429 with a RetryInfo when the step gives `retryDelay`.
 * Requests the real API refuses are refused (400 INVALID_ARGUMENT): unknown top-level fields,
 * roles other than user/model, malformed parts and images, function responses that do not answer
 * the calls of the turn before them, thinkingConfig a model does not take, and — for Gemini 3 —
 * a call of the current turn sent back without the thoughtSignature this server gave it.
 */

const TOP_LEVEL = new Set([
  "contents",
  "systemInstruction",
  "tools",
  "toolConfig",
  "generationConfig",
  "safetySettings",
  "cachedContent",
]);
const PART_FIELDS = ["text", "inlineData", "functionCall", "functionResponse", "fileData"];
/** Google's documented placeholder for calls it did not sign. */
const UNSIGNED = "skip_thought_signature_validator";

type Json = Record<string, unknown>;

export function geminiRoute(
  method: string | undefined,
  url: URL,
): { model: string; stream: boolean } | undefined {
  const match = /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(url.pathname);
  if (method !== "POST" || !match) return undefined;
  return {
    model: decodeURIComponent(match[1]!),
    stream: match[2] === "streamGenerateContent" && url.searchParams.get("alt") === "sse",
  };
}

export function geminiSignature(name: string): string {
  return btoa(`fake-gemini-signature:${name}`);
}

function isGemini3(model: string): boolean {
  const major = /^gemini-(\d+)/.exec(model);
  return (major ? Number(major[1]) : 3) >= 3;
}

/** Why the real API would answer 400, or undefined. */
export function geminiProblem(model: string, body: Json): string | undefined {
  for (const key of Object.keys(body))
    if (!TOP_LEVEL.has(key)) return `Invalid JSON payload received. Unknown name "${key}"`;
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0)
    return "* GenerateContentRequest.contents: contents is not specified";
  let previous: Json | undefined;
  for (const [c, content] of (contents as Json[]).entries()) {
    if (content.role !== "user" && content.role !== "model")
      return `Please use a valid role: user, model. (contents[${c}].role)`;
    const parts = Array.isArray(content.parts) ? (content.parts as Json[]) : [];
    if (!parts.length)
      return `* GenerateContentRequest.contents[${c}].parts: contents.parts must not be empty.`;
    for (const [p, part] of parts.entries()) {
      const fields = PART_FIELDS.filter((field) => part[field] !== undefined);
      if (fields.length !== 1)
        return `* GenerateContentRequest.contents[${c}].parts[${p}].data: required oneof field 'data' must have one initialized field`;
      const problem = partProblem(part, content.role);
      if (problem) return `contents[${c}].parts[${p}]: ${problem}`;
    }
    const responses = parts.filter((part) => part.functionResponse).length;
    if (responses) {
      const calls = previous?.role === "model" ? callsOf(previous).length : 0;
      if (calls !== responses)
        return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
    }
    previous = content;
  }
  return (
    signatureProblem(model, contents as Json[]) ??
    thinkingProblem(model, body) ??
    toolsProblem(body)
  );
}

function partProblem(part: Json, role: unknown): string | undefined {
  const inline = part.inlineData as Json | undefined;
  if (inline) {
    if (role !== "user") return "inline data is only accepted in user turns";
    if (typeof inline.mimeType !== "string" || typeof inline.data !== "string")
      return "inlineData needs mimeType and data";
    const problem =
      inline.mimeType === "application/pdf"
        ? pdfBytesProblem(inline.data)
        : imageBytesProblem(inline.mimeType, inline.data);
    if (problem) return `inlineData: ${problem}`;
  }
  const call = part.functionCall as Json | undefined;
  if (call && (typeof call.name !== "string" || (call.args !== undefined && !isRecord(call.args))))
    return "functionCall needs a name and object args";
  const response = part.functionResponse as Json | undefined;
  if (response && (typeof response.name !== "string" || !isRecord(response.response)))
    return "functionResponse needs a name and an object response";
  return undefined;
}

function callsOf(content: Json): Json[] {
  return ((content.parts as Json[]) ?? []).filter((part) => part.functionCall);
}

/**
 * Gemini 3 checks the current turn only: from the newest user text on, the first call of every
 * model step must carry its signature, unchanged.
 */
function signatureProblem(model: string, contents: Json[]): string | undefined {
  if (!isGemini3(model)) return undefined;
  let start = 0;
  for (const [c, content] of contents.entries())
    if (
      content.role === "user" &&
      (content.parts as Json[]).some((part) => part.text !== undefined)
    )
      start = c;
  for (const content of contents.slice(start)) {
    const first = callsOf(content)[0];
    if (!first) continue;
    const name = String((first.functionCall as Json).name);
    const signature = first.thoughtSignature;
    if (signature === undefined)
      return `Function call is missing a thought_signature in functionCall parts. Additional data, function call \`default_api:${name}\``;
    if (signature !== UNSIGNED && signature !== geminiSignature(name))
      return "Corrupted thought signature.";
  }
  return undefined;
}

function thinkingProblem(model: string, body: Json): string | undefined {
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const thinking = isRecord(config.thinkingConfig) ? config.thinkingConfig : undefined;
  if (!thinking) return undefined;
  if (thinking.thinkingLevel !== undefined && thinking.thinkingBudget !== undefined)
    return "thinking_budget and thinking_level are not supported together.";
  const levels = model.includes("flash") ? ["minimal", "low", "medium", "high"] : ["low", "high"];
  if (thinking.thinkingLevel !== undefined) {
    if (!isGemini3(model)) return "Thinking level is not supported for this model.";
    if (!levels.includes(String(thinking.thinkingLevel).toLowerCase()))
      return `Thinking level ${String(thinking.thinkingLevel)} is not supported for this model.`;
  }
  if (thinking.thinkingBudget === 0 && model.includes("pro"))
    return "Budget 0 is invalid. This model only works in thinking mode.";
  return undefined;
}

function toolsProblem(body: Json): string | undefined {
  for (const tool of Array.isArray(body.tools) ? (body.tools as Json[]) : [])
    for (const declaration of (tool.functionDeclarations as Json[] | undefined) ?? []) {
      if (!/^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/.test(String(declaration.name)))
        return `Invalid function name: ${String(declaration.name)}`;
      if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined)
        return "parameters and parametersJsonSchema are mutually exclusive";
    }
  return undefined;
}

export function geminiThinkingAsked(body: Json): boolean {
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  return isRecord(config.thinkingConfig) && config.thinkingConfig.includeThoughts === true;
}

/** The newest user text part (function responses are user turns too). */
export function geminiLastUserText(body: Json): string {
  const contents = Array.isArray(body.contents) ? (body.contents as Json[]) : [];
  for (const content of [...contents].reverse()) {
    if (content.role !== "user") continue;
    const texts = ((content.parts as Json[]) ?? [])
      .filter((part) => typeof part.text === "string")
      .map((part) => part.text as string);
    if (texts.length) return texts.join("\n");
  }
  return "";
}

function usageOf(plan: Plan, model: string): Json {
  const thoughts = plan.thinking ? Math.ceil(plan.thinking.text.length / 4) : 0;
  return {
    usageMetadata: {
      promptTokenCount: plan.usage.input + plan.usage.cacheRead,
      candidatesTokenCount: plan.usage.output,
      totalTokenCount: plan.usage.input + plan.usage.cacheRead + plan.usage.output + thoughts,
      ...(plan.usage.cacheRead ? { cachedContentTokenCount: plan.usage.cacheRead } : {}),
      ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    },
    modelVersion: model,
    responseId: `fake-gemini-${Date.now()}`,
  };
}

const chunk = (parts: Json[], extra: Json = {}): Json => ({
  candidates: [{ content: { parts, role: "model" }, index: 0, ...extra }],
});

function callParts(plan: Plan): Json[] {
  return plan.calls.map((call, index) => ({
    functionCall: { name: call.name, args: safeJson(call.fragments.join("")) ?? {} },
    // Parallel calls: only the first carries the signature, as Gemini sends them.
    ...(index === 0 ? { thoughtSignature: geminiSignature(call.name) } : {}),
  }));
}

function finishOf(plan: Plan): string {
  return plan.stop === "max_tokens" ? "MAX_TOKENS" : "STOP";
}

export async function streamGemini(
  writer: FakeStreamWriter,
  plan: Plan,
  model: string,
  step: ScriptedStep,
): Promise<void> {
  const send = (payload: Json) => writer.raw(`data: ${JSON.stringify(payload)}\r\n\r\n`);
  if (plan.thinking) await send(chunk([{ text: plan.thinking.text, thought: true }]));
  for (const piece of plan.textChunks)
    if (piece) await send({ ...chunk([{ text: piece }]), ...usageOf(plan, model) });
  if (step.type === "stall") return writer.stall();
  if (step.type === "truncate") return writer.end();
  if (step.type === "stream_error") {
    await send({
      error: { code: 500, message: step.message ?? step.errorType, status: step.errorType },
    });
    return writer.end();
  }
  await send({
    ...chunk(callParts(plan), { finishReason: finishOf(plan) }),
    ...usageOf(plan, model),
  });
  writer.end();
}

export function geminiJson(plan: Plan, model: string): Json {
  const text = plan.textChunks.join("");
  return {
    ...chunk(
      [
        ...(plan.thinking ? [{ text: plan.thinking.text, thought: true }] : []),
        ...(text ? [{ text }] : []),
        ...callParts(plan),
      ],
      { finishReason: finishOf(plan) },
    ),
    ...usageOf(plan, model),
  };
}

const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

export function sendGeminiError(res: ServerResponse, step: FakeErrorStep): void {
  res.writeHead(step.status, { "content-type": "application/json", ...(step.headers ?? {}) });
  if (step.rawBody !== undefined) return void res.end(step.rawBody);
  const details = step.retryDelay
    ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: step.retryDelay }]
    : undefined;
  res.end(
    JSON.stringify({
      error: {
        code: step.status,
        message: step.message ?? `scripted ${step.status}`,
        status: step.errorType ?? STATUS[step.status] ?? "UNKNOWN",
        ...(details ? { details } : {}),
      },
    }),
  );
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
