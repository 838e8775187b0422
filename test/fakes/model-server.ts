import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import * as z from "zod";
import {
  errorStepSchema,
  type Plan,
  type ScriptedStep as Step,
  stepSchema,
} from "./model-steps.ts";
import { readBody } from "../../scripts/simulate/fakes/read-body.ts";
import { listenOnLoopback } from "../../scripts/simulate/fakes/listen.ts";
import { handleEmbeddings, handleWorkersAiRun } from "./embeddings.ts";
import { AnthropicPromptCache } from "./anthropic-cache.ts";
import { imageProblem } from "./model-images.ts";
import { signThinking, thinkingProblem, thinkingRequested } from "./anthropic-thinking.ts";
import {
  handleOpenAiTranscription,
  isFixtureRoute,
  isTranscriptionRoute,
  serveFixture,
  whisperResult,
} from "./speech.ts";
import {
  answerAuraSpeech,
  handleOpenAiSpeech,
  isSpeechRoute,
  WORKERS_AI_SPEECH_MODEL,
} from "./text-to-speech.ts";
import { convertToMarkdown, type ConversionInput } from "./markdown-conversion.ts";
import {
  geminiJson,
  geminiLastUserText,
  geminiProblem,
  geminiRoute,
  geminiThinkingAsked,
  sendGeminiError,
  streamGemini,
} from "./gemini-wire.ts";
import {
  isResponsesRoute,
  responsesJson,
  responsesLastUserText,
  responsesProblem,
  responsesSummaryAsked,
  streamResponses,
} from "./responses-wire.ts";

/**
 * A fake model provider on 127.0.0.1 that speaks both wire formats, chosen by path:
 *   POST /v1/messages                       Anthropic Messages (SSE or JSON)
 *   POST /chat/completions, /v1/chat/...    OpenAI Chat Completions (SSE or JSON)
 *   POST /v1/responses                      OpenAI Responses API (SSE or JSON; responses-wire.ts)
 *   POST /v1beta/models/<m>:streamGenerateContent?alt=sse, :generateContent
 *                                           Google Gemini API (gemini-wire.ts)
 *   POST /v1/embeddings                     OpenAI embeddings, deterministic (embeddings.ts)
 *   POST /ai/run/<model>                    Workers AI text embeddings (embeddings.ts), whisper (speech.ts)
 *   POST /v1/audio/transcriptions           OpenAI speech-to-text, multipart (speech.ts)
 *   POST /v1/audio/speech                   OpenAI text-to-speech: real audio bytes (text-to-speech.ts)
 *   POST /ai/tomarkdown                     Workers AI Markdown Conversion of PDFs (markdown-conversion.ts)
 * Tests script it per scenario: the request's messages contain `[scenario:<id>]`, so parallel test
 * files never consume each other's scripts.
 *   POST /_control/script    { scenario, steps: Step[] }   queue responses (one per request)
 *   GET  /_control/requests?scenario=<id>                  what the model was sent, in order
 *   POST /_control/reset     { scenario }                  forget the queue and the log
 *   POST /_control/key-error { key, step | null }           every request carrying that API key
 *                            (x-api-key, Bearer, x-goog-api-key) gets this error step, scenario or
 *                            not, until it is cleared with `step: null` (a key that is rate limited
 *                            or revoked whatever it asks; auth-profile rotation tests)
 * With nothing queued it answers "You said: <last user text>". Anthropic requests that set
 * cache_control get their usage from an emulation of its prompt cache (anthropic-cache.ts). Image parts are checked as the real
 * APIs check them (model-images.ts): a malformed one is a 400 in that API's error envelope.
 */

const scriptSchema = z.object({ scenario: z.string().min(1), steps: z.array(stepSchema).min(1) });
const resetSchema = z.object({ scenario: z.string().min(1) });
const keyErrorSchema = z.object({ key: z.string().min(1), step: errorStepSchema.nullable() });

export interface RecordedModelRequest {
  api: "anthropic" | "openai" | "google" | "responses";
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

type Api = RecordedModelRequest["api"];

export async function startFakeModelServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const queues = new Map<string, Step[]>();
  const promptCache = new AnthropicPromptCache();
  const logs = new Map<string, RecordedModelRequest[]>();
  const keyErrors = new Map<string, Extract<Step, { type: "error" }>>();
  let counter = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: { message: `fake model server: ${String(error)}` } });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    // Speech-to-text and the media fixtures (speech.ts): binary bodies, read there.
    if (isFixtureRoute(url.pathname)) return serveFixture(url.pathname, res);
    if (isTranscriptionRoute(req.method, url.pathname))
      return handleOpenAiTranscription(req, res, (body) => {
        const scenario = `stt:${String(body.model)}`;
        logs.set(scenario, [
          ...(logs.get(scenario) ?? []),
          { api: "openai", path: url.pathname, headers: flatHeaders(req), body },
        ]);
      });
    if (isSpeechRoute(req.method, url.pathname))
      return handleOpenAiSpeech(req, res, (body) => {
        const scenario = `tts:${String(body.model)}`;
        logs.set(scenario, [
          ...(logs.get(scenario) ?? []),
          { api: "openai", path: url.pathname, headers: flatHeaders(req), body },
        ]);
      });
    const raw = await readBody(req);
    if (url.pathname === "/_control/script" && req.method === "POST") {
      const parsed = scriptSchema.safeParse(safeJson(raw));
      if (!parsed.success) return sendJson(res, 400, { error: parsed.error.issues });
      const queue = queues.get(parsed.data.scenario) ?? [];
      queue.push(...parsed.data.steps);
      queues.set(parsed.data.scenario, queue);
      return sendJson(res, 200, { queued: queue.length });
    }
    if (url.pathname === "/_control/requests" && req.method === "GET") {
      const scenario = url.searchParams.get("scenario") ?? "default";
      return sendJson(res, 200, {
        requests: logs.get(scenario) ?? [],
        pending: queues.get(scenario)?.length ?? 0,
      });
    }
    if (url.pathname === "/_control/key-error" && req.method === "POST") {
      const parsed = keyErrorSchema.safeParse(safeJson(raw));
      if (!parsed.success) return sendJson(res, 400, { error: parsed.error.issues });
      if (parsed.data.step) keyErrors.set(parsed.data.key, parsed.data.step);
      else keyErrors.delete(parsed.data.key);
      return sendJson(res, 200, { ok: true });
    }
    if (url.pathname === "/_control/reset" && req.method === "POST") {
      const parsed = resetSchema.safeParse(safeJson(raw));
      if (!parsed.success) return sendJson(res, 400, { error: parsed.error.issues });
      queues.delete(parsed.data.scenario);
      logs.delete(parsed.data.scenario);
      return sendJson(res, 200, { ok: true });
    }
    if (req.method === "POST" && /\/embeddings$/.test(url.pathname)) {
      const body = safeJson(raw);
      return handleEmbeddings(res, flatHeaders(req), isRecord(body) ? body : {}, (scenario) => {
        logs.set(scenario, [
          ...(logs.get(scenario) ?? []),
          {
            api: "openai",
            path: url.pathname,
            headers: flatHeaders(req),
            body: isRecord(body) ? body : {},
          },
        ]);
      });
    }
    if (
      req.method === "POST" &&
      decodeURIComponent(url.pathname) === `/ai/run/${WORKERS_AI_SPEECH_MODEL}`
    ) {
      const body = safeJson(raw);
      return answerAuraSpeech(res, isRecord(body) ? body : {}, (inputs) =>
        logs.set(`workers-ai:${WORKERS_AI_SPEECH_MODEL}`, [
          ...(logs.get(`workers-ai:${WORKERS_AI_SPEECH_MODEL}`) ?? []),
          { api: "openai", path: url.pathname, headers: flatHeaders(req), body: inputs },
        ]),
      );
    }
    if (req.method === "POST" && url.pathname === "/ai/tomarkdown") {
      const body = safeJson(raw) as { files?: ConversionInput[]; options?: unknown } | undefined;
      const files = Array.isArray(body?.files) ? body.files : [];
      logs.set("workers-ai:tomarkdown", [
        ...(logs.get("workers-ai:tomarkdown") ?? []),
        {
          api: "openai",
          path: url.pathname,
          headers: flatHeaders(req),
          body: { names: files.map((file) => file.name), options: body?.options ?? {} },
        },
      ]);
      return sendJson(res, 200, files.map(convertToMarkdown));
    }
    if (
      req.method === "POST" &&
      url.pathname.startsWith("/ai/run/") &&
      decodeURIComponent(url.pathname.slice("/ai/run/".length)).startsWith("@cf/openai/whisper")
    ) {
      const body = safeJson(raw);
      const model = decodeURIComponent(url.pathname.slice("/ai/run/".length));
      const answer = whisperResult(isRecord(body) ? body : {});
      logs.set(`workers-ai:${model}`, [
        ...(logs.get(`workers-ai:${model}`) ?? []),
        { api: "openai", path: url.pathname, headers: flatHeaders(req), body: { model } },
      ]);
      return answer.ok
        ? sendJson(res, 200, { result: answer.result, success: true, errors: [] })
        : sendJson(res, 400, {
            result: null,
            success: false,
            errors: [{ code: 5006, message: answer.message }],
          });
    }
    if (req.method === "POST" && url.pathname.startsWith("/ai/run/")) {
      const body = safeJson(raw);
      const model = decodeURIComponent(url.pathname.slice("/ai/run/".length));
      return handleWorkersAiRun(res, model, isRecord(body) ? body : {}, (scenario) => {
        logs.set(scenario, [
          ...(logs.get(scenario) ?? []),
          {
            api: "openai",
            path: url.pathname,
            headers: flatHeaders(req),
            body: isRecord(body) ? body : {},
          },
        ]);
      });
    }
    const gemini = geminiRoute(req.method, url);
    const api: Api | undefined =
      req.method === "POST" && /\/v1\/messages$/.test(url.pathname)
        ? "anthropic"
        : req.method === "POST" && /\/chat\/completions$/.test(url.pathname)
          ? "openai"
          : gemini
            ? "google"
            : isResponsesRoute(req.method, url.pathname)
              ? "responses"
              : undefined;
    if (!api)
      return sendJson(res, 404, {
        error: { message: `fake model server: no route ${req.method} ${url.pathname}` },
      });

    const body = safeJson(raw);
    if (!isRecord(body))
      return sendJson(res, 400, {
        error: { type: "invalid_request_error", message: "body is not a JSON object" },
      });
    const scenario = scenarioOf(body);
    const log = logs.get(scenario) ?? [];
    log.push({ api, path: url.pathname, headers: flatHeaders(req), body });
    logs.set(scenario, log);

    // Gemini and Responses requests the real APIs refuse, images included (their wire files).
    const wireProblem =
      api === "google"
        ? geminiProblem(gemini!.model, body)
        : api === "responses"
          ? responsesProblem(body)?.message
          : undefined;
    if (wireProblem)
      return sendError(res, api, { type: "error", status: 400, message: wireProblem });
    // Image parts a real API would refuse are refused before any script runs (model-images.ts).
    const badImage = api === "anthropic" || api === "openai" ? imageProblem(api, body) : undefined;
    if (badImage)
      return sendError(res, api, {
        type: "error",
        status: 400,
        errorType: "invalid_request_error",
        message: badImage,
      });
    // So are thinking blocks and parameters Anthropic would refuse (anthropic-thinking.ts).
    const badThinking = api === "anthropic" ? thinkingProblem(body) : undefined;
    if (badThinking)
      return sendError(res, api, {
        type: "error",
        status: 400,
        errorType: "invalid_request_error",
        message: badThinking,
      });
    const keyError = keyErrors.get(apiKeyOf(req));
    if (keyError) return sendError(res, api, keyError);
    const step = queues.get(scenario)?.shift() ?? defaultStep(api, body);
    const id = ++counter;
    if (step.type === "hang") return; // the response stays open until the client gives up or the server stops
    if ("delayMs" in step && step.delayMs) await wait(step.delayMs);
    if (step.type === "error") return sendError(res, api, step);
    const stream = api === "google" ? gemini!.stream : body.stream === true;
    const includeUsage =
      isRecord(body.stream_options) && body.stream_options.include_usage === true;
    const model = gemini?.model ?? (typeof body.model === "string" ? body.model : "fake-model");
    const plan = planFor(step, body, id, api === "anthropic" ? promptCache : undefined);
    if (!stream) {
      if (step.type !== "text" && step.type !== "tool_calls")
        return sendError(res, api, { type: "error", status: 500, message: "scripted failure" });
      return sendJson(res, 200, jsonAnswer(api, plan, model));
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const writer = new SseWriter(res, "chunkDelayMs" in step ? (step.chunkDelayMs ?? 0) : 0);
    if (api === "anthropic") await streamAnthropic(writer, plan, model, step);
    else if (api === "google") await streamGemini(writer, plan, model, step);
    else if (api === "responses") await streamResponses(writer, plan, model, step);
    else await streamOpenAi(writer, plan, model, step, includeUsage);
  }

  return listenOnLoopback(server);
}

function jsonAnswer(api: Api, plan: Plan, model: string): Record<string, unknown> {
  if (api === "google") return geminiJson(plan, model);
  if (api === "responses") return responsesJson(plan, model);
  return api === "anthropic" ? anthropicJson(plan, model) : openAiJson(plan, model);
}

function planFor(
  step: Step,
  body: Record<string, unknown>,
  id: number,
  promptCache?: AnthropicPromptCache,
): Plan {
  const text = step.type === "hang" || step.type === "error" ? "" : (step.text ?? "");
  const textChunks = step.type === "text" && step.chunks ? step.chunks : splitInto(text, 3);
  const calls =
    step.type === "tool_calls"
      ? step.calls.map((call, index) => {
          const json =
            typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
          return {
            id: call.id ?? `call_fake_${id}_${index}`,
            name: call.name,
            fragments: splitInto(json, call.fragments ?? 1),
          };
        })
      : [];
  const scripted = step.type === "text" || step.type === "tool_calls" ? step.usage : undefined;
  // Unscripted Anthropic requests that set breakpoints get the cache's own split (anthropic-cache.ts).
  const cached = scripted ? undefined : promptCache?.usageFor(body);
  const usage = {
    input:
      scripted?.input ??
      cached?.input ??
      Math.ceil(JSON.stringify(body.messages ?? body.contents ?? body.input ?? []).length / 4),
    output: scripted?.output ?? Math.max(1, Math.ceil(text.length / 4)),
    cacheRead: scripted?.cacheRead ?? cached?.cacheRead ?? 0,
    cacheWrite: scripted?.cacheWrite ?? cached?.cacheWrite ?? 0,
  };
  const stop = calls.length
    ? "tool_use"
    : step.type === "text" && step.stopReason === "max_tokens"
      ? "max_tokens"
      : "end";
  return { thinking: thinkingFor(step, body), textChunks, calls, usage, stop };
}

/** Thinking when the request asks for it: the step's, else a line about the question (Anthropic only). */
function thinkingFor(step: Step, body: Record<string, unknown>): Plan["thinking"] {
  const scripted = step.type === "text" || step.type === "tool_calls" ? step.thinking : undefined;
  const asked =
    thinkingRequested(body) ||
    typeof body.reasoning_effort === "string" ||
    geminiThinkingAsked(body) ||
    responsesSummaryAsked(body);
  if (!asked) return undefined;
  const text =
    scripted ?? (thinkingRequested(body) ? `Considering: ${lastUserText(body)}` : undefined);
  return text === undefined ? undefined : { text, signature: signThinking(text) };
}

async function streamAnthropic(
  writer: SseWriter,
  plan: Plan,
  model: string,
  step: Step,
): Promise<void> {
  await writer.event("message_start", {
    type: "message_start",
    message: {
      id: `msg_fake_${Date.now()}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: plan.usage.input,
        output_tokens: 1,
        cache_read_input_tokens: plan.usage.cacheRead,
        cache_creation_input_tokens: plan.usage.cacheWrite,
      },
    },
  });
  await writer.event("ping", { type: "ping" });
  let index = 0;
  if (plan.thinking) {
    await writer.event("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
    for (const piece of splitInto(plan.thinking.text, 2))
      await writer.event("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "thinking_delta", thinking: piece },
      });
    await writer.event("content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "signature_delta", signature: plan.thinking.signature },
    });
    await writer.event("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  if (plan.textChunks.some(Boolean)) {
    await writer.event("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "text", text: "" },
    });
    for (const piece of plan.textChunks) {
      await writer.event("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text: piece },
      });
    }
    if (step.type === "stall") return writer.stall();
    if (step.type === "truncate") return writer.end();
    if (step.type === "stream_error") {
      await writer.event("error", {
        type: "error",
        error: { type: step.errorType, message: step.message ?? step.errorType },
      });
      return writer.end();
    }
    await writer.event("content_block_stop", { type: "content_block_stop", index });
    index++;
  } else if (step.type === "stall") return writer.stall();
  else if (step.type === "truncate") return writer.end();
  else if (step.type === "stream_error") {
    await writer.event("error", {
      type: "error",
      error: { type: step.errorType, message: step.message ?? step.errorType },
    });
    return writer.end();
  }
  for (const call of plan.calls) {
    await writer.event("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
    });
    for (const fragment of call.fragments) {
      await writer.event("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: fragment },
      });
    }
    await writer.event("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  const stopReason = plan.stop === "end" ? "end_turn" : plan.stop;
  await writer.event("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: plan.usage.output },
  });
  await writer.event("message_stop", { type: "message_stop" });
  writer.end();
}

async function streamOpenAi(
  writer: SseWriter,
  plan: Plan,
  model: string,
  step: Step,
  includeUsage: boolean,
): Promise<void> {
  const base = {
    id: `chatcmpl-fake-${Date.now()}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  await writer.data(chunk({ role: "assistant", content: "" }));
  if (plan.thinking) await writer.data(chunk({ reasoning_content: plan.thinking.text }));
  for (const piece of plan.textChunks) if (piece) await writer.data(chunk({ content: piece }));
  if (step.type === "stall") return writer.stall();
  if (step.type === "truncate") return writer.end();
  if (step.type === "stream_error") {
    await writer.data({
      error: {
        message: step.message ?? step.errorType,
        type: step.errorType,
        param: null,
        code: null,
      },
    });
    return writer.end();
  }
  for (const [index, call] of plan.calls.entries()) {
    await writer.data(
      chunk({
        tool_calls: [
          { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
        ],
      }),
    );
    for (const fragment of call.fragments)
      await writer.data(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
  }
  const finish =
    plan.stop === "tool_use" ? "tool_calls" : plan.stop === "max_tokens" ? "length" : "stop";
  await writer.data(chunk({}, finish));
  if (includeUsage) {
    await writer.data({
      ...base,
      choices: [],
      usage: {
        prompt_tokens: plan.usage.input + plan.usage.cacheRead,
        completion_tokens: plan.usage.output,
        total_tokens: plan.usage.input + plan.usage.cacheRead + plan.usage.output,
        prompt_tokens_details: { cached_tokens: plan.usage.cacheRead },
      },
    });
  }
  await writer.raw("data: [DONE]\n\n");
  writer.end();
}

function anthropicJson(plan: Plan, model: string): Record<string, unknown> {
  const text = plan.textChunks.join("");
  return {
    id: `msg_fake_${Date.now()}`,
    type: "message",
    role: "assistant",
    model,
    content: [
      ...(plan.thinking
        ? [{ type: "thinking", thinking: plan.thinking.text, signature: plan.thinking.signature }]
        : []),
      ...(text ? [{ type: "text", text }] : []),
      ...plan.calls.map((call) => ({
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: safeJson(call.fragments.join("")) ?? {},
      })),
    ],
    stop_reason: plan.stop === "end" ? "end_turn" : plan.stop,
    stop_sequence: null,
    usage: {
      input_tokens: plan.usage.input,
      output_tokens: plan.usage.output,
      cache_read_input_tokens: plan.usage.cacheRead,
      cache_creation_input_tokens: plan.usage.cacheWrite,
    },
  };
}

function openAiJson(plan: Plan, model: string): Record<string, unknown> {
  const text = plan.textChunks.join("");
  return {
    id: `chatcmpl-fake-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: text || null,
          ...(plan.calls.length
            ? {
                tool_calls: plan.calls.map((call) => ({
                  id: call.id,
                  type: "function",
                  function: { name: call.name, arguments: call.fragments.join("") },
                })),
              }
            : {}),
        },
        finish_reason:
          plan.stop === "tool_use" ? "tool_calls" : plan.stop === "max_tokens" ? "length" : "stop",
      },
    ],
    usage: {
      prompt_tokens: plan.usage.input + plan.usage.cacheRead,
      completion_tokens: plan.usage.output,
      total_tokens: plan.usage.input + plan.usage.cacheRead + plan.usage.output,
      prompt_tokens_details: { cached_tokens: plan.usage.cacheRead },
    },
  };
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

function sendError(res: ServerResponse, api: Api, step: Extract<Step, { type: "error" }>): void {
  if (api === "google") return sendGeminiError(res, step);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(step.headers ?? {}),
  };
  if (step.rawBody !== undefined) {
    res.writeHead(step.status, headers);
    res.end(step.rawBody);
    return;
  }
  const type =
    step.errorType ??
    (api === "anthropic"
      ? (ANTHROPIC_ERROR_TYPES[step.status] ?? "api_error")
      : step.status >= 500
        ? "server_error"
        : "invalid_request_error");
  const message = step.message ?? `scripted ${step.status}`;
  const body =
    api === "anthropic"
      ? { type: "error", error: { type, message } }
      : { error: { message, type, param: null, code: step.code ?? null } };
  res.writeHead(step.status, headers);
  res.end(JSON.stringify(body));
}

function defaultStep(_api: Api, body: Record<string, unknown>): Step {
  return { type: "text", text: `You said: ${lastUserText(body) || "(nothing)"}` };
}

/** The newest user-authored text in any format (Anthropic tool results are user turns too). */
function lastUserText(body: Record<string, unknown>): string {
  if (Array.isArray(body.contents)) return geminiLastUserText(body);
  if (body.input !== undefined) return responsesLastUserText(body);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (!isRecord(message) || message.role !== "user") continue;
    if (typeof message.content === "string") return message.content;
    if (Array.isArray(message.content)) {
      const text = message.content
        .filter(
          (block): block is Record<string, unknown> =>
            isRecord(block) && block.type === "text" && typeof block.text === "string",
        )
        .map((block) => block.text as string)
        .join("\n");
      if (text) return text;
    }
  }
  return "";
}

function scenarioOf(body: Record<string, unknown>): string {
  const haystack = JSON.stringify([
    body.system ?? body.systemInstruction ?? body.instructions ?? null,
    body.messages ?? body.contents ?? body.input ?? [],
  ]);
  const matches = [...haystack.matchAll(/\[scenario:([A-Za-z0-9_.:-]+)\]/g)];
  return matches.at(-1)?.[1] ?? "default";
}

class SseWriter {
  constructor(
    private readonly res: ServerResponse,
    private readonly chunkDelayMs: number,
  ) {}

  async event(name: string, payload: unknown): Promise<void> {
    await this.raw(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  async data(payload: unknown): Promise<void> {
    await this.raw(`data: ${JSON.stringify(payload)}\n\n`);
  }

  async raw(text: string): Promise<void> {
    if (this.res.destroyed) return;
    this.res.write(text);
    if (this.chunkDelayMs) await wait(this.chunkDelayMs);
  }

  /** Leaves the stream open and silent; the client's idle timeout has to end it. */
  stall(): void {}

  end(): void {
    if (!this.res.destroyed) this.res.end();
  }
}

function splitInto(text: string, parts: number): string[] {
  if (!text) return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The API key a request carries, in whichever header its wire format puts it. */
function apiKeyOf(req: IncomingMessage): string {
  const bearer = /^Bearer\s+(.+)$/i.exec(String(req.headers.authorization ?? ""))?.[1];
  return String(req.headers["x-api-key"] ?? req.headers["x-goog-api-key"] ?? bearer ?? "");
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") out[name] = value;
    else if (Array.isArray(value)) out[name] = value.join(", ");
  }
  return out;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type { FakeModelStep } from "./model-steps.ts";
