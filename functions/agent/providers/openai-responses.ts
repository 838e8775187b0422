import type { Message, ModelRequest } from "../types.ts";
import { postToProvider } from "./http.ts";
import { reasoningEffortFor } from "./openai-reasoning.ts";
import { fromResponseJson, readResponseStream } from "./openai-responses-stream.ts";
import { sanitizeTranscript } from "./transcript.ts";
import type { ProviderCall, ResolvedModel } from "./types.ts";

/**
 * OpenAI's Responses API (`api: "openai-responses"`): `POST {baseUrl}/responses`, streamed as
 * typed events. Stateless (`store: false`): the whole transcript goes as input items every turn,
 * so nothing lives on OpenAI's side between requests and a failover mid-conversation loses nothing.
 */

export const callOpenAiResponses: ProviderCall = async (model, request) => {
  const body = await postToProvider({
    url: `${model.baseUrl.replace(/\/+$/, "")}/responses`,
    headers: {
      ...(model.apiKey ? { authorization: `Bearer ${model.apiKey}` } : {}),
      ...model.headers,
    },
    body: responsesRequestBody(model, request),
    idleTimeoutMs: model.idleTimeoutMs,
    signal: request.signal,
    secrets: [model.apiKey],
    baseUrlKey: `models.providers.${model.providerId}.baseUrl`,
  });
  if (body.kind === "json") return fromResponseJson(body.json, request);
  return readResponseStream(body.events, request);
};

export function responsesRequestBody(
  model: ResolvedModel,
  request: ModelRequest,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: model.modelId,
    input: toResponsesInput(request.messages),
    stream: true,
    store: false,
    max_output_tokens: request.maxTokens ?? model.maxTokens,
  };
  if (request.system) body.instructions = request.system;
  // The same levels → efforts as Chat Completions' reasoning_effort (openai-reasoning.ts).
  const effort = reasoningEffortFor(model, request.thinkLevel);
  if (effort) body.reasoning = { effort };
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      // Strict mode wants every property required and no extra keys; our schemas are not written so.
      strict: false,
    }));
  }
  return body;
}

type ResponsesContentPart =
  | { type: "input_text"; text: string }
  | { type: "input_file"; filename: string; file_data: string }
  | { type: "input_image"; image_url: string; detail: "auto" };

export type ResponsesInputItem =
  | { role: "user"; content: string | ResponsesContentPart[] }
  | { role: "assistant"; content: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string };

/** Our transcript → input items: a call and its output are items of their own, paired by call_id. */
export function toResponsesInput(messages: Message[]): ResponsesInputItem[] {
  const out: ResponsesInputItem[] = [];
  for (const message of sanitizeTranscript(messages)) {
    if (message.role === "user") {
      out.push({
        role: "user",
        content:
          message.images?.length || message.documents?.length
            ? [
                // PDFs first, as OpenAI's file-input guide places them.
                ...(message.documents ?? []).map((document) => ({
                  type: "input_file" as const,
                  filename: document.name ?? "document.pdf",
                  file_data: `data:${document.mimeType};base64,${document.data}`,
                })),
                { type: "input_text", text: message.content },
                ...(message.images ?? []).map((image) => ({
                  type: "input_image" as const,
                  image_url: `data:${image.mimeType};base64,${image.data}`,
                  detail: "auto" as const,
                })),
              ]
            : message.content,
      });
    } else if (message.role === "assistant") {
      if (message.content) out.push({ role: "assistant", content: message.content });
      for (const call of message.toolCalls ?? [])
        out.push({
          type: "function_call",
          call_id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.arguments),
        });
    } else {
      out.push({
        type: "function_call_output",
        call_id: message.toolCallId,
        output: message.isError ? `Error: ${message.content}` : message.content,
      });
    }
  }
  return out;
}
