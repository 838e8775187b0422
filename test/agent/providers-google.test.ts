import { describe, expect, it } from "vitest";
import { callModel } from "../../functions/agent/model-call.ts";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import { callGemini } from "../../functions/agent/providers/google.ts";
import { geminiThinkingConfig } from "../../functions/agent/providers/google-thinking.ts";
import { UNMETERED } from "../../functions/agent/metering.ts";
import { ModelError, type Message, type ModelRequest } from "../../functions/agent/types.ts";
import { RED_PNG_BASE64 as PNG_1X1 } from "../fixtures/media/images.ts";
import { imageOnlyPdf } from "../fixtures/media/pdf.ts";
import { toBase64 } from "../../functions/media/parts.ts";
import {
  newScenario,
  recorded,
  recordingSleep,
  script,
  suiteConfig,
  userSays,
  testEnv as env,
} from "./model-helpers.ts";

const REF = "fakegoogle/gemini-3.1-pro-preview";
const model = (ref = REF) => resolveModel(suiteConfig, env, ref);

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
    additionalProperties: false,
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

describe("Gemini adapter (google-generative-ai)", () => {
  it("streams text parts as deltas and reads usageMetadata, cached tokens apart", async () => {
    const scenario = newScenario("gemini-text");
    await script(scenario, [
      {
        type: "text",
        text: "One, two, three.",
        chunks: ["One,", " two,", " three."],
        usage: { input: 30, output: 6, cacheRead: 20 },
      },
    ]);
    const deltas: string[] = [];
    const result = await callGemini(
      model(),
      request([userSays(scenario, "count")], { onTextDelta: (t) => deltas.push(t) }),
    );
    expect(deltas).toEqual(["One,", " two,", " three."]);
    expect(result.text).toBe("One, two, three.");
    expect(result.stopReason).toBe("end");
    // promptTokenCount (50) includes cachedContentTokenCount (20); ours keeps them apart.
    expect(result.usage).toEqual({
      inputTokens: 30,
      outputTokens: 6,
      cacheReadTokens: 20,
      cacheWriteTokens: 0,
    });
  });

  it("sends Gemini's wire format: key header, systemInstruction, functionDeclarations, images inline", async () => {
    const scenario = newScenario("gemini-wire");
    await callGemini(
      model(),
      request(
        [
          {
            role: "user",
            content: userSays(scenario, "what is this?").content,
            images: [{ mimeType: "image/png", data: PNG_1X1 }],
          },
        ],
        { tools: [fetchTool], maxTokens: 99 },
      ),
    );
    const [sent] = await recorded(scenario);
    expect(sent!.path).toBe("/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent");
    expect(sent!.headers["x-goog-api-key"]).toBe("test-google-key");
    expect(sent!.headers.authorization).toBeUndefined();
    expect(sent!.body).toEqual({
      contents: [
        {
          role: "user",
          parts: [
            { inlineData: { mimeType: "image/png", data: PNG_1X1 } },
            { text: expect.stringContaining("what is this?") },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: "You are a test agent." }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: "web_fetch",
              description: "Fetch a URL",
              parametersJsonSchema: fetchTool.parameters,
            },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 99 },
    });
  });

  it("sends a PDF without text as inlineData before the text, and a file Gemini cannot read is a 400 about the document", async () => {
    const scenario = newScenario("gemini-pdf");
    const pdf = toBase64(imageOnlyPdf());
    const ask = (data: string) =>
      callGemini(
        model(),
        request([
          {
            role: "user",
            content: userSays(scenario, "summarise").content,
            documents: [{ mimeType: "application/pdf", data, name: "scan.pdf" }],
          },
        ]),
      );
    await ask(pdf);
    const [sent] = await recorded(scenario);
    expect(sent!.body.contents[0].parts[0]).toEqual({
      inlineData: { mimeType: "application/pdf", data: pdf },
    });
    const refused = await failure(ask(btoa("not a pdf")));
    expect([refused.kind, refused.status]).toEqual(["bad_request", 400]);
    expect(refused.message).toContain("document");
  });

  it("runs a tool round: the call keeps its thoughtSignature and the result goes back as functionResponse", async () => {
    const scenario = newScenario("gemini-tools");
    await script(scenario, [
      {
        type: "tool_calls",
        calls: [
          { name: "web_fetch", arguments: { url: "https://example.com" } },
          { name: "web_fetch", arguments: { url: "https://example.org" } },
        ],
      },
      { type: "text", text: "Both fetched." },
    ]);
    const first = await callGemini(
      model(),
      request([userSays(scenario, "fetch both")], { tools: [fetchTool] }),
    );
    expect(first.stopReason).toBe("tool_use");
    expect(first.toolCalls.map((call) => call.arguments)).toEqual([
      { url: "https://example.com" },
      { url: "https://example.org" },
    ]);
    expect(first.toolCalls[0]!.thoughtSignature).toBeTruthy();
    expect(new Set(first.toolCalls.map((call) => call.id)).size).toBe(2);
    const transcript: Message[] = [
      userSays(scenario, "fetch both"),
      { role: "assistant", content: "", toolCalls: first.toolCalls },
      ...first.toolCalls.map((call, i) => ({
        role: "tool" as const,
        toolCallId: call.id,
        name: call.name,
        content: `page ${i}`,
        ...(i === 1 ? { isError: true } : {}),
      })),
    ];
    const second = await callGemini(model(), request(transcript, { tools: [fetchTool] }));
    expect(second.text).toBe("Both fetched.");
    const sent = (await recorded(scenario))[1]!.body;
    expect(sent.contents.slice(1)).toEqual([
      {
        role: "model",
        parts: [
          {
            functionCall: { name: "web_fetch", args: { url: "https://example.com" } },
            thoughtSignature: first.toolCalls[0]!.thoughtSignature,
          },
          { functionCall: { name: "web_fetch", args: { url: "https://example.org" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "web_fetch", response: { result: "page 0" } } },
          { functionResponse: { name: "web_fetch", response: { error: "page 1" } } },
        ],
      },
    ]);
  });

  it("is refused by the fake as by Gemini 3 when a call comes back without its signature, and signs another model's calls with Google's placeholder", async () => {
    const scenario = newScenario("gemini-signature");
    const transcript: Message[] = [
      userSays(scenario, "fetch"),
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "toolu_1", name: "web_fetch", arguments: { url: "https://a.example" } }],
      },
      { role: "tool", toolCallId: "toolu_1", name: "web_fetch", content: "ok" },
    ];
    // A call another model made (no signature): the adapter sends the documented placeholder.
    await script(scenario, [{ type: "text", text: "done" }]);
    expect((await callGemini(model(), request(transcript))).text).toBe("done");
    const forged = transcript.map((message) =>
      message.role === "assistant"
        ? {
            ...message,
            toolCalls: message.toolCalls!.map((c) => ({ ...c, thoughtSignature: "Zm9yZ2Vk" })),
          }
        : message,
    );
    const error = await failure(callGemini(model(), request(forged)));
    expect(error.kind).toBe("bad_request");
    expect(error.status).toBe(400);
    expect(error.message).toContain("INVALID_ARGUMENT");
  });

  it("classifies Google's errors: RESOURCE_EXHAUSTED with RetryInfo, a bad key, overload, a cut stream", async () => {
    const scenario = newScenario("gemini-errors");
    await script(scenario, [
      {
        type: "error",
        status: 429,
        message: "You exceeded your current quota, please check your plan and billing details.",
        retryDelay: "37s",
      },
      { type: "error", status: 400, message: "API key not valid. Please pass a valid API key." },
      { type: "error", status: 503, message: "The model is overloaded. Please try again later." },
      { type: "truncate", text: "partial" },
    ]);
    const call = () => callGemini(model(), request([userSays(scenario, "hi")]));
    const limited = await failure(call());
    expect([limited.kind, limited.retryAfterMs]).toEqual(["rate_limit", 37_000]);
    expect((await failure(call())).kind).toBe("auth");
    expect((await failure(call())).kind).toBe("overloaded");
    expect((await failure(call())).kind).toBe("network");
  });

  it("maps thinking levels to thinkingLevel on Gemini 3 and thinkingBudget on 2.5, as each model takes them", () => {
    expect(geminiThinkingConfig("gemini-3.1-pro-preview", "off")).toEqual({ thinkingLevel: "low" });
    expect(geminiThinkingConfig("gemini-3-flash-preview", "off")).toEqual({
      thinkingLevel: "minimal",
    });
    expect(geminiThinkingConfig("gemini-3.1-pro-preview", "medium")).toEqual({
      thinkingLevel: "high",
      includeThoughts: true,
    });
    expect(geminiThinkingConfig("gemini-3-flash-preview", "medium")?.thinkingLevel).toBe("medium");
    expect(geminiThinkingConfig("gemini-3.1-pro-preview", "adaptive")).toEqual({
      includeThoughts: true,
    });
    expect(geminiThinkingConfig("gemini-2.5-flash", "off")).toEqual({ thinkingBudget: 0 });
    // 2.5 Pro only works thinking and refuses a budget of 0.
    expect(geminiThinkingConfig("gemini-2.5-pro", "off")).toBeUndefined();
    expect(geminiThinkingConfig("gemini-2.5-pro", "adaptive")?.thinkingBudget).toBe(-1);
    expect(geminiThinkingConfig("gemini-2.5-pro", "max")?.thinkingBudget).toBe(32_768);
    expect(geminiThinkingConfig("gemma-4-26b-a4b-it", "high")).toBeUndefined();
    expect(geminiThinkingConfig("gemini-3.1-pro-preview", undefined)).toBeUndefined();
  });

  it("sends the thinking level the fake accepts and keeps the thought summary apart from the answer", async () => {
    const scenario = newScenario("gemini-thinking");
    await script(scenario, [
      { type: "text", text: "42", thinking: "Six times seven." },
      { type: "text", text: "ok" },
      { type: "text", text: "ok" },
    ]);
    const deltas: string[] = [];
    const result = await callGemini(
      model("fakegoogle/gemini-3-flash-preview"),
      request([userSays(scenario, "answer")], {
        thinkLevel: "low",
        onTextDelta: (t) => deltas.push(t),
      }),
    );
    expect(result.text).toBe("42");
    expect(deltas.join("")).toBe("42");
    expect(result.thinking).toEqual([{ type: "thinking", text: "Six times seven." }]);
    await callGemini(
      model("fakegoogle/gemini-2.5-pro"),
      request([userSays(scenario, "a")], { thinkLevel: "off" }),
    );
    await callGemini(
      model("fakegoogle/gemini-2.5-flash"),
      request([userSays(scenario, "b")], { thinkLevel: "high" }),
    );
    const sent = (await recorded(scenario)).map((r) => r.body.generationConfig.thinkingConfig);
    expect(sent).toEqual([
      { thinkingLevel: "low", includeThoughts: true },
      undefined,
      { thinkingBudget: 24_576, includeThoughts: true },
    ]);
  });

  it("answers through callModel with the ref, the usage and the catalog price", async () => {
    const scenario = newScenario("gemini-call-model");
    await script(scenario, [
      { type: "text", text: "hello", usage: { input: 1000, output: 500, cacheRead: 1000 } },
    ]);
    const { sleep } = recordingSleep();
    const result = await callModel({
      config: suiteConfig,
      env,
      selection: { primary: REF, fallbacks: [] },
      request: { system: "sys", messages: [userSays(scenario, "hi")], tools: [] },
      meter: UNMETERED,
      sleep,
    });
    expect(result.modelRef).toBe(REF);
    expect(result.usage).toMatchObject({
      inputTokens: 1000,
      outputTokens: 500,
      cacheReadTokens: 1000,
    });
    // The catalog's $2 in / $12 out / $0.20 cached per million tokens.
    expect(result.costUsd).toBeCloseTo(0.002 + 0.006 + 0.0002, 8);
  });
});

describe("google provider resolution", () => {
  it("resolves google/… built in from GEMINI_API_KEY or GOOGLE_API_KEY, on AI Studio's endpoint", () => {
    const gemini = resolveModel(
      suiteConfig,
      { GEMINI_API_KEY: "g-key" },
      "google/gemini-3-flash-preview",
    );
    expect(gemini).toMatchObject({
      api: "google-generative-ai",
      baseUrl: "https://generativelanguage.googleapis.com/v1beta",
      apiKey: "g-key",
      native: true,
      acceptsImages: true,
    });
    expect(
      resolveModel(suiteConfig, { GOOGLE_API_KEY: "k2" }, "google/gemini-2.5-pro").apiKey,
    ).toBe("k2");
    // An id no catalog lists resolves with its family's limits (OpenClaw's dynamic model ids).
    expect(
      resolveModel(suiteConfig, { GEMINI_API_KEY: "k" }, "google/gemini-9-flash"),
    ).toMatchObject({ contextWindow: 1_048_576, maxTokens: 65_536, reasoning: true });
    expect(
      resolveModel(suiteConfig, { GEMINI_API_KEY: "k" }, "google/gemini-2.0-flash"),
    ).toMatchObject({ contextWindow: 1_048_576, reasoning: false });
    expect(
      resolveModel(suiteConfig, { GEMINI_API_KEY: "k" }, "google/gemma-4-26b-a4b-it"),
    ).toMatchObject({ contextWindow: 200_000, maxTokens: 8192, reasoning: false });
    expect(() => resolveModel(suiteConfig, {}, "google/gemini-2.5-pro")).toThrow(
      /GEMINI_API_KEY or GOOGLE_API_KEY/,
    );
  });
});
