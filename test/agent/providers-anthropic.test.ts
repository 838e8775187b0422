import { describe, expect, it } from "vitest";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import { callAnthropic } from "../../functions/agent/providers/anthropic.ts";
import { ModelError, type Message, type ModelRequest } from "../../functions/agent/types.ts";
import {
  newScenario,
  recorded,
  script,
  suiteConfig,
  userSays,
  testEnv as env,
} from "./model-helpers.ts";

const model = () => resolveModel(suiteConfig, env, "fakeanthropic/claude-test");

function request(messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: "You are a test agent.", messages, tools: [], ...extra };
}

const readTool = {
  name: "read",
  description: "Read a workspace file",
  parameters: {
    type: "object" as const,
    properties: { path: { type: "string" } },
    required: ["path"],
  },
};

describe("Anthropic Messages adapter", () => {
  it("streams text deltas in order and counts usage, including cache reads and writes", async () => {
    const scenario = newScenario("anthropic-text");
    await script(scenario, [
      {
        type: "text",
        text: "Hello there, friend.",
        chunks: ["Hel", "lo there", ", friend."],
        usage: { input: 42, output: 7, cacheRead: 100, cacheWrite: 5 },
      },
    ]);
    const deltas: string[] = [];
    const result = await callAnthropic(
      model(),
      request([userSays(scenario, "hi")], { onTextDelta: (t) => deltas.push(t) }),
    );

    expect(deltas).toEqual(["Hel", "lo there", ", friend."]);
    expect(result.text).toBe("Hello there, friend.");
    expect(result.stopReason).toBe("end");
    expect(result.toolCalls).toEqual([]);
    expect(result.usage).toEqual({
      inputTokens: 42,
      outputTokens: 7,
      cacheReadTokens: 100,
      cacheWriteTokens: 5,
    });
  });

  it("sends the Messages wire format: key, version, model, max_tokens, system, stream", async () => {
    const scenario = newScenario("anthropic-wire");
    await callAnthropic(
      model(),
      request([userSays(scenario, "hi")], { tools: [readTool], maxTokens: 321 }),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.path).toBe("/v1/messages");
    expect(sent!.headers["x-api-key"]).toBe("test-anthropic-key");
    expect(sent!.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent!.headers.authorization).toBeUndefined();
    expect(sent!.body).toMatchObject({
      model: "claude-test",
      max_tokens: 321,
      stream: true,
      system: [{ type: "text", text: "You are a test agent." }],
      tools: [
        { name: "read", description: "Read a workspace file", input_schema: readTool.parameters },
      ],
      messages: [{ role: "user", content: [{ type: "text", text: `hi [scenario:${scenario}]` }] }],
    });
    // cache_control is only for the native endpoint: a proxy may reject it.
    expect(sent!.body.system[0].cache_control).toBeUndefined();
  });

  it("assembles tool calls from fragmented input_json_delta events", async () => {
    const scenario = newScenario("anthropic-tools");
    await script(scenario, [
      {
        type: "tool_calls",
        text: "Let me look.",
        calls: [
          {
            id: "toolu_1",
            name: "read",
            arguments: { path: "AGENTS.md", limit: 20 },
            fragments: 5,
          },
          { id: "toolu_2", name: "read", arguments: { path: "notes/ü.md" }, fragments: 3 },
        ],
      },
    ]);
    const result = await callAnthropic(
      model(),
      request([userSays(scenario, "read things")], { tools: [readTool] }),
    );
    expect(result.stopReason).toBe("tool_use");
    expect(result.text).toBe("Let me look.");
    expect(result.toolCalls).toEqual([
      { id: "toolu_1", name: "read", arguments: { path: "AGENTS.md", limit: 20 } },
      { id: "toolu_2", name: "read", arguments: { path: "notes/ü.md" } },
    ]);
  });

  it("keeps unparsable tool arguments as _raw instead of dropping them", async () => {
    const scenario = newScenario("anthropic-raw-args");
    await script(scenario, [
      {
        type: "tool_calls",
        calls: [{ id: "toolu_x", name: "read", arguments: '{"path": "AGE', fragments: 2 }],
      },
    ]);
    const result = await callAnthropic(
      model(),
      request([userSays(scenario, "go")], { tools: [readTool] }),
    );
    expect(result.toolCalls).toEqual([
      { id: "toolu_x", name: "read", arguments: { _raw: '{"path": "AGE' } },
    ]);
  });

  it("translates a transcript with tool calls and results into alternating Anthropic turns", async () => {
    const scenario = newScenario("anthropic-transcript");
    await callAnthropic(
      model(),
      request(
        [
          userSays(scenario, "read two files"),
          {
            role: "assistant",
            content: "Reading.",
            toolCalls: [
              { id: "t1", name: "read", arguments: { path: "a.md" } },
              { id: "t2", name: "read", arguments: { path: "b.md" } },
            ],
          },
          { role: "tool", toolCallId: "t1", name: "read", content: "A" },
          { role: "tool", toolCallId: "t2", name: "read", content: "no such file", isError: true },
          { role: "tool", toolCallId: "orphan", name: "read", content: "dropped" },
          { role: "user", content: "thanks" },
        ],
        { tools: [readTool] },
      ),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: `read two files [scenario:${scenario}]` }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "t1", name: "read", input: { path: "a.md" } },
          { type: "tool_use", id: "t2", name: "read", input: { path: "b.md" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "A" },
          { type: "tool_result", tool_use_id: "t2", content: "no such file", is_error: true },
          { type: "text", text: "thanks" },
        ],
      },
    ]);
  });

  it("fills a missing tool result so the transcript stays valid", async () => {
    const scenario = newScenario("anthropic-missing-result");
    await callAnthropic(
      model(),
      request([
        userSays(scenario, "go"),
        { role: "assistant", content: "", toolCalls: [{ id: "t9", name: "read", arguments: {} }] },
        { role: "user", content: "are you there?" },
      ]),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.body.messages[2].content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "t9",
      is_error: true,
    });
  });

  it("maps an error event inside the stream (overloaded_error) to an overloaded ModelError", async () => {
    const scenario = newScenario("anthropic-stream-error");
    await script(scenario, [
      {
        type: "stream_error",
        text: "partial",
        errorType: "overloaded_error",
        message: "Overloaded",
      },
    ]);
    const deltas: string[] = [];
    const error = await callAnthropic(
      model(),
      request([userSays(scenario, "hi")], { onTextDelta: (t) => deltas.push(t) }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).kind).toBe("overloaded");
    expect(deltas.join("")).toBe("partial");
  });

  it("reports a stream that ends without message_stop as a network failure", async () => {
    const scenario = newScenario("anthropic-truncated");
    await script(scenario, [{ type: "truncate", text: "half an ans" }]);
    const error = await callAnthropic(model(), request([userSays(scenario, "hi")])).catch(
      (e: unknown) => e,
    );
    expect((error as ModelError).kind).toBe("network");
  });

  it.each([
    [{ status: 429, headers: { "retry-after": "12" } }, "rate_limit", 12_000],
    [{ status: 529 }, "overloaded", undefined],
    [{ status: 500 }, "server", undefined],
    [{ status: 401, message: "invalid x-api-key" }, "auth", undefined],
    [
      {
        status: 400,
        errorType: "invalid_request_error",
        message: "prompt is too long: 210000 tokens > 200000 maximum",
      },
      "context_overflow",
      undefined,
    ],
    [
      { status: 400, errorType: "invalid_request_error", message: "messages: field required" },
      "bad_request",
      undefined,
    ],
    [
      {
        status: 400,
        errorType: "invalid_request_error",
        message: "Your credit balance is too low to access the Anthropic API.",
      },
      "billing",
      undefined,
    ],
  ] as const)("classifies HTTP %j as %s", async (step, kind, retryAfterMs) => {
    const scenario = newScenario("anthropic-http-error");
    await script(scenario, [{ type: "error", ...step }]);
    const error = await callAnthropic(model(), request([userSays(scenario, "hi")])).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).kind).toBe(kind);
    expect((error as ModelError).status).toBe(step.status);
    expect((error as ModelError).retryAfterMs).toBe(retryAfterMs);
  });

  it("never puts the API key in an error message", async () => {
    const scenario = newScenario("anthropic-redact");
    await script(scenario, [
      { type: "error", status: 401, message: "bad key test-anthropic-key and sk-ant-abc123secret" },
    ]);
    const error = (await callAnthropic(model(), request([userSays(scenario, "hi")])).catch(
      (e: unknown) => e,
    )) as ModelError;
    expect(error.kind).toBe("auth");
    expect(error.message).not.toContain("test-anthropic-key");
    expect(error.message).not.toContain("abc123secret");
  });
});
