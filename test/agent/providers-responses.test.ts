import { describe, expect, it } from "vitest";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import {
  callOpenAiResponses,
  responsesRequestBody,
} from "../../functions/agent/providers/openai-responses.ts";
import { ModelError, type Message, type ModelRequest } from "../../functions/agent/types.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { RED_PNG_BASE64 } from "../fixtures/media/images.ts";
import { imageOnlyPdf } from "../fixtures/media/pdf.ts";
import { toBase64 } from "../../functions/media/parts.ts";
import {
  newScenario,
  recorded,
  script,
  suiteConfig,
  userSays,
  testEnv as env,
} from "./model-helpers.ts";

const model = () => resolveModel(suiteConfig, env, "fakeresponses/gpt-test");

function request(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: "You are a test agent.", messages, tools: [], ...extra };
}

const fetchTool = {
  name: "web_fetch",
  description: "Fetch a URL",
  parameters: {
    type: "object" as const,
    properties: { url: { type: "string" } },
    required: ["url"],
  },
};

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("OpenAI Responses adapter (openai-responses)", () => {
  it("streams response.output_text.delta and reads usage from response.completed, cached apart", async () => {
    const scenario = newScenario("responses-text");
    await script(scenario, [
      {
        type: "text",
        text: "One, two, three.",
        chunks: ["One,", " two,", " three."],
        usage: { input: 30, output: 6, cacheRead: 20 },
      },
    ]);
    const deltas: string[] = [];
    const result = await callOpenAiResponses(
      model(),
      request([userSays(scenario, "count")], { onTextDelta: (t) => deltas.push(t) }),
    );
    expect(deltas).toEqual(["One,", " two,", " three."]);
    expect(result.text).toBe("One, two, three.");
    expect(result.stopReason).toBe("end");
    // input_tokens (50) includes input_tokens_details.cached_tokens (20).
    expect(result.usage).toEqual({
      inputTokens: 30,
      outputTokens: 6,
      cacheReadTokens: 20,
      cacheWriteTokens: 0,
    });
  });

  it("sends the Responses wire format: instructions, input items, input_image, flat function tools, store false", async () => {
    const scenario = newScenario("responses-wire");
    await callOpenAiResponses(
      model(),
      request(
        [
          {
            role: "user",
            content: userSays(scenario, "look").content,
            images: [{ mimeType: "image/png", data: RED_PNG_BASE64 }],
          },
        ],
        { tools: [fetchTool], maxTokens: 99 },
      ),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.path).toBe("/v1/responses");
    expect(sent!.headers.authorization).toBe("Bearer test-openai-key");
    expect(sent!.body).toEqual({
      model: "gpt-test",
      instructions: "You are a test agent.",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: expect.stringContaining("look") },
            {
              type: "input_image",
              image_url: `data:image/png;base64,${RED_PNG_BASE64}`,
              detail: "auto",
            },
          ],
        },
      ],
      stream: true,
      store: false,
      max_output_tokens: 99,
      tools: [
        {
          type: "function",
          name: "web_fetch",
          description: "Fetch a URL",
          parameters: fetchTool.parameters,
          strict: false,
        },
      ],
    });
  });

  it("sends a PDF without text as an input_file data URL before the text", async () => {
    const scenario = newScenario("responses-pdf");
    const pdf = toBase64(imageOnlyPdf());
    await callOpenAiResponses(
      model(),
      request([
        {
          role: "user",
          content: userSays(scenario, "summarise").content,
          documents: [{ mimeType: "application/pdf", data: pdf, name: "scan.pdf" }],
        },
      ]),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.body.input[0].content[0]).toEqual({
      type: "input_file",
      filename: "scan.pdf",
      file_data: `data:application/pdf;base64,${pdf}`,
    });
  });

  it("runs a tool round: arguments from function_call_arguments deltas, results as function_call_output", async () => {
    const scenario = newScenario("responses-tools");
    await script(scenario, [
      {
        type: "tool_calls",
        text: "Fetching.",
        calls: [
          {
            id: "call_abc",
            name: "web_fetch",
            arguments: { url: "https://example.com" },
            fragments: 4,
          },
        ],
      },
      { type: "text", text: "Fetched." },
    ]);
    const first = await callOpenAiResponses(
      model(),
      request([userSays(scenario, "fetch")], { tools: [fetchTool] }),
    );
    expect(first.stopReason).toBe("tool_use");
    expect(first.text).toBe("Fetching.");
    expect(first.toolCalls).toEqual([
      { id: "call_abc", name: "web_fetch", arguments: { url: "https://example.com" } },
    ]);
    const second = await callOpenAiResponses(
      model(),
      request(
        [
          userSays(scenario, "fetch"),
          { role: "assistant", content: "Fetching.", toolCalls: first.toolCalls },
          { role: "tool", toolCallId: "call_abc", name: "web_fetch", content: "page" },
        ],
        { tools: [fetchTool] },
      ),
    );
    expect(second.text).toBe("Fetched.");
    const sent = (await recorded(scenario))[1]!.body;
    expect(sent.input.slice(1)).toEqual([
      { role: "assistant", content: "Fetching." },
      {
        type: "function_call",
        call_id: "call_abc",
        name: "web_fetch",
        arguments: JSON.stringify({ url: "https://example.com" }),
      },
      { type: "function_call_output", call_id: "call_abc", output: "page" },
    ]);
  });

  it("maps the thinking level to reasoning.effort within the model's efforts", async () => {
    const scenario = newScenario("responses-reasoning");
    await callOpenAiResponses(model(), request([userSays(scenario, "a")], { thinkLevel: "high" }));
    await callOpenAiResponses(model(), request([userSays(scenario, "b")], { thinkLevel: "off" }));
    await callOpenAiResponses(model(), request([userSays(scenario, "c")], { thinkLevel: "xhigh" }));
    const sent = (await recorded(scenario)).map((r) => r.body.reasoning);
    // gpt-test declares reasoning without compat efforts: OpenAI's minimal…high, xhigh → high.
    expect(sent).toEqual([{ effort: "high" }, undefined, { effort: "high" }]);
  });

  it("classifies errors: 429 with Retry-After, 401, response.failed in the stream, a cut stream, max_output_tokens", async () => {
    const scenario = newScenario("responses-errors");
    await script(scenario, [
      {
        type: "error",
        status: 429,
        headers: { "retry-after": "3" },
        message: "Rate limit reached",
      },
      { type: "error", status: 401, message: "Incorrect API key provided" },
      { type: "stream_error", text: "half", errorType: "server_error", message: "boom" },
      { type: "truncate", text: "partial" },
      { type: "text", text: "long", stopReason: "max_tokens" },
    ]);
    const call = () => callOpenAiResponses(model(), request([userSays(scenario, "hi")]));
    const limited = await failure(call());
    expect([limited.kind, limited.retryAfterMs]).toEqual(["rate_limit", 3000]);
    expect((await failure(call())).kind).toBe("auth");
    expect((await failure(call())).kind).toBe("server");
    expect((await failure(call())).kind).toBe("network");
    expect((await call()).stopReason).toBe("max_tokens");
  });

  it("is refused by the fake as by the API when an output answers no call", async () => {
    const scenario = newScenario("responses-orphan");
    // A transcript whose call id was rewritten: the output's call_id matches no function_call.
    const broken = request([
      userSays(scenario, "fetch"),
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "web_fetch", arguments: {} }],
      },
      { role: "tool", toolCallId: "call_1", name: "web_fetch", content: "page" },
    ]);
    const body = responsesRequestBody(model(), broken);
    (body.input as Array<Record<string, unknown>>)[1]!.call_id = "call_other";
    const res = await fetch(`${model().baseUrl}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    const json = (await res.json()) as { error: { message: string; type: string } };
    expect(json.error.type).toBe("invalid_request_error");
    expect(json.error.message).toContain(
      "No tool call found for function call output with call_id call_1",
    );
  });

  it("is selectable as api openai-responses for any provider, under OpenClaw's name", () => {
    const config = parseConfig({
      models: { providers: { openai: { api: "openai-responses" } } },
    });
    const resolved = resolveModel(config, { OPENAI_API_KEY: "sk-test" }, "openai/gpt-5.6-sol");
    expect(resolved).toMatchObject({
      api: "openai-responses",
      baseUrl: "https://api.openai.com/v1",
      native: true,
    });
  });
});
