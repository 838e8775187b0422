import type { Message, ModelRequest } from "../types.ts";
import { fromGeminiJson, readGeminiStream } from "./google-response.ts";
import {
  geminiThinkingConfig,
  requiresCallSignatures,
  UNSIGNED_CALL_SIGNATURE,
} from "./google-thinking.ts";
import { postToProvider } from "./http.ts";
import { sanitizeTranscript } from "./transcript.ts";
import type { ProviderCall, ResolvedModel } from "./types.ts";

/**
 * Google's Gemini API (`api: "google-generative-ai"`): `POST {baseUrl}/models/{model}:
 * streamGenerateContent?alt=sse` with the key in `x-goog-api-key`, as Google AI Studio serves it
 * (https://generativelanguage.googleapis.com/v1beta) and as proxies of it do.
 */

export const callGemini: ProviderCall = async (model, request) => {
  const body = await postToProvider({
    url: geminiStreamUrl(model.baseUrl, model.modelId),
    headers: {
      ...(model.apiKey ? { "x-goog-api-key": model.apiKey } : {}),
      ...model.headers,
    },
    body: geminiRequestBody(model, request),
    idleTimeoutMs: model.idleTimeoutMs,
    signal: request.signal,
    secrets: [model.apiKey],
    baseUrlKey: `models.providers.${model.providerId}.baseUrl`,
  });
  if (body.kind === "json") return fromGeminiJson(body.json, request);
  return readGeminiStream(body.events, request);
};

/** `{baseUrl}/models/{id}:streamGenerateContent?alt=sse`; an id given as `models/…` is not doubled. */
export function geminiStreamUrl(baseUrl: string, modelId: string): string {
  const id = modelId.replace(/^models\//, "");
  return `${baseUrl.replace(/\/+$/, "")}/models/${encodeURIComponent(id)}:streamGenerateContent?alt=sse`;
}

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | {
      functionCall: { name: string; args: Record<string, unknown> };
      thoughtSignature?: string;
    }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export function geminiRequestBody(
  model: ResolvedModel,
  request: ModelRequest,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    contents: toGeminiContents(request.messages, {
      signCalls: requiresCallSignatures(model.modelId),
    }),
  };
  if (request.system) body.systemInstruction = { parts: [{ text: request.system }] };
  if (request.tools.length) {
    body.tools = [
      {
        // parametersJsonSchema takes the JSON Schema the tools are written in as it is; the older
        // `parameters` field takes only Google's OpenAPI subset.
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
  }
  const thinkingConfig = geminiThinkingConfig(model.modelId, request.thinkLevel);
  body.generationConfig = {
    maxOutputTokens: request.maxTokens ?? model.maxTokens,
    ...(thinkingConfig ? { thinkingConfig } : {}),
  };
  return body;
}

/**
 * Our transcript → Gemini contents: the assistant is "model", tool results are functionResponse
 * parts in a user turn, consecutive same-role turns merge (a round's results go back together).
 * Each call keeps the thoughtSignature Gemini gave it; with `signCalls` (Gemini 3) the first call
 * of a step that has none (another model's turn) carries Google's placeholder instead.
 */
export function toGeminiContents(
  messages: Message[],
  options: { signCalls?: boolean } = {},
): GeminiContent[] {
  const out: GeminiContent[] = [];
  const push = (role: GeminiContent["role"], parts: GeminiPart[]) => {
    if (!parts.length) return;
    const last = out.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  for (const message of sanitizeTranscript(messages)) {
    if (message.role === "user") {
      // PDFs and images go inline before the text, as Google's document and vision guides place them.
      push("user", [
        ...(message.documents ?? []).map((document) => ({
          inlineData: { mimeType: document.mimeType, data: document.data },
        })),
        ...(message.images ?? []).map((image) => ({
          inlineData: { mimeType: image.mimeType, data: image.data },
        })),
        { text: message.content || "(empty message)" },
      ]);
    } else if (message.role === "assistant") {
      const parts: GeminiPart[] = message.content ? [{ text: message.content }] : [];
      for (const [index, call] of (message.toolCalls ?? []).entries()) {
        const signature =
          call.thoughtSignature ??
          (options.signCalls && index === 0 ? UNSIGNED_CALL_SIGNATURE : undefined);
        parts.push({
          functionCall: { name: call.name, args: call.arguments },
          ...(signature ? { thoughtSignature: signature } : {}),
        });
      }
      push("model", parts);
    } else {
      push("user", [
        {
          functionResponse: {
            name: message.name,
            response: message.isError ? { error: message.content } : { result: message.content },
          },
        },
      ]);
    }
  }
  // A conversation starts with the user's turn.
  if (out[0]?.role === "model")
    out.unshift({ role: "user", parts: [{ text: "(conversation continues)" }] });
  return out;
}
