import { describe, expect, it } from "vitest";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import { callOpenAiCompletions } from "../../functions/agent/providers/openai.ts";
import { ModelError, type Message, type ModelRequest } from "../../functions/agent/types.ts";
import {
  newScenario,
  recorded,
  script,
  suiteConfig,
  userSays,
  testEnv as env,
} from "./model-helpers.ts";

const model = () => resolveModel(suiteConfig, env, "fakeopenai/gpt-test");

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

describe("OpenAI Chat Completions adapter", () => {
  it("streams content deltas in order and reads usage from the final include_usage chunk", async () => {
    const scenario = newScenario("openai-text");
    await script(scenario, [
      {
        type: "text",
        text: "One, two, three.",
        chunks: ["One,", " two,", " three."],
        usage: { input: 30, output: 6, cacheRead: 20 },
      },
    ]);
    const deltas: string[] = [];
    const result = await callOpenAiCompletions(
      model(),
      request([userSays(scenario, "count")], { onTextDelta: (t) => deltas.push(t) }),
    );
    expect(deltas).toEqual(["One,", " two,", " three."]);
    expect(result.text).toBe("One, two, three.");
    expect(result.stopReason).toBe("end");
    // prompt_tokens (50) includes the 20 cached ones; ours keeps them apart.
    expect(result.usage).toEqual({
      inputTokens: 30,
      outputTokens: 6,
      cacheReadTokens: 20,
      cacheWriteTokens: 0,
    });
  });

  it("sends the Chat Completions wire format: bearer key, system first, stream_options.include_usage", async () => {
    const scenario = newScenario("openai-wire");
    await callOpenAiCompletions(
      model(),
      request([userSays(scenario, "hi")], { tools: [fetchTool], maxTokens: 99 }),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.path).toBe("/v1/chat/completions");
    expect(sent!.headers.authorization).toBe("Bearer test-openai-key");
    expect(sent!.headers["x-api-key"]).toBeUndefined();
    expect(sent!.body).toMatchObject({
      model: "gpt-test",
      stream: true,
      stream_options: { include_usage: true },
      // A non-native endpoint gets max_tokens; api.openai.com gets max_completion_tokens.
      max_tokens: 99,
      tools: [
        {
          type: "function",
          function: {
            name: "web_fetch",
            description: "Fetch a URL",
            parameters: fetchTool.parameters,
          },
        },
      ],
      messages: [
        { role: "system", content: "You are a test agent." },
        { role: "user", content: `hi [scenario:${scenario}]` },
      ],
    });
  });

  it("assembles tool calls from delta.tool_calls fragments keyed by index", async () => {
    const scenario = newScenario("openai-tools");
    await script(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_a",
            name: "web_fetch",
            arguments: { url: "https://example.com/a?x=1&y=2" },
            fragments: 6,
          },
          {
            id: "call_b",
            name: "web_fetch",
            arguments: { url: "https://example.com/b" },
            fragments: 2,
          },
        ],
      },
    ]);
    const result = await callOpenAiCompletions(
      model(),
      request([userSays(scenario, "fetch two")], { tools: [fetchTool] }),
    );
    expect(result.stopReason).toBe("tool_use");
    expect(result.toolCalls).toEqual([
      { id: "call_a", name: "web_fetch", arguments: { url: "https://example.com/a?x=1&y=2" } },
      { id: "call_b", name: "web_fetch", arguments: { url: "https://example.com/b" } },
    ]);
  });

  it("translates tool calls and results to assistant.tool_calls and role tool", async () => {
    const scenario = newScenario("openai-transcript");
    await callOpenAiCompletions(
      model(),
      request([
        userSays(scenario, "fetch"),
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "web_fetch", arguments: { url: "https://x.test" } }],
        },
        { role: "tool", toolCallId: "c1", name: "web_fetch", content: "<html>" },
      ]),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "web_fetch", arguments: '{"url":"https://x.test"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "<html>" },
    ]);
  });

  it("maps an error object inside the stream to a ModelError", async () => {
    const scenario = newScenario("openai-stream-error");
    await script(scenario, [
      {
        type: "stream_error",
        text: "par",
        errorType: "server_error",
        message: "The server had an error",
      },
    ]);
    const error = await callOpenAiCompletions(model(), request([userSays(scenario, "hi")])).catch(
      (e: unknown) => e,
    );
    expect((error as ModelError).kind).toBe("server");
  });

  it("reports a stream cut before [DONE] and before any finish_reason as a network failure", async () => {
    const scenario = newScenario("openai-truncated");
    await script(scenario, [{ type: "truncate", text: "half" }]);
    const error = await callOpenAiCompletions(model(), request([userSays(scenario, "hi")])).catch(
      (e: unknown) => e,
    );
    expect((error as ModelError).kind).toBe("network");
  });

  it.each([
    [
      { status: 429, headers: { "retry-after-ms": "1500", "retry-after": "9" } },
      "rate_limit",
      1500,
    ],
    [
      {
        status: 429,
        code: "insufficient_quota",
        message: "You exceeded your current quota, please check your plan and billing details.",
      },
      "billing",
      undefined,
    ],
    [
      {
        status: 400,
        code: "context_length_exceeded",
        message: "This model's maximum context length is 128000 tokens.",
      },
      "context_overflow",
      undefined,
    ],
    [
      { status: 401, code: "invalid_api_key", message: "Incorrect API key provided: sk-abc***xyz" },
      "auth",
      undefined,
    ],
    [{ status: 402, message: "Payment required" }, "billing", undefined],
    [{ status: 503, message: "The engine is currently overloaded" }, "overloaded", undefined],
    [{ status: 502 }, "server", undefined],
  ] as const)("classifies HTTP %j as %s", async (step, kind, retryAfterMs) => {
    const scenario = newScenario("openai-http-error");
    await script(scenario, [{ type: "error", ...step }]);
    const error = (await callOpenAiCompletions(model(), request([userSays(scenario, "hi")])).catch(
      (e: unknown) => e,
    )) as ModelError;
    expect(error).toBeInstanceOf(ModelError);
    expect(error.kind).toBe(kind);
    expect(error.retryAfterMs).toBe(retryAfterMs);
    expect(error.message).not.toMatch(/sk-abc/);
  });
});
