import { describe, expect, it, vi } from "vitest";
import {
  callModel,
  ModelFailoverError,
  NO_MODEL_CONFIGURED_MESSAGE,
  OVERLOAD_WAIT_NOTICE,
  type CallModelArgs,
} from "../../functions/agent/model-call.ts";
import { FAKE_REPLY_PREFIX } from "../../functions/agent/providers/fake.ts";
import { ModelError, type Message } from "../../functions/agent/types.ts";
import { UNMETERED } from "../../functions/agent/metering.ts";
import {
  newScenario,
  recorded,
  recordingSleep,
  script,
  suiteConfig,
  userSays,
  testEnv as env,
} from "./model-helpers.ts";

const PRIMARY = "fakeanthropic/claude-test";
const FALLBACK = "fakeopenai/gpt-test";

function args(
  messages: Message[],
  overrides: Partial<CallModelArgs> = {},
): CallModelArgs & { waits: number[] } {
  const { sleep, waits } = recordingSleep();
  return {
    config: suiteConfig,
    env,
    selection: { primary: PRIMARY, fallbacks: [FALLBACK] },
    request: { system: "sys", messages, tools: [] },
    meter: UNMETERED,
    random: () => 0.5, // no jitter: delays are exactly the exponential schedule
    sleep,
    waits,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("callModel retry and failover", () => {
  it("retries a 429 after the provider's Retry-After, then succeeds on the same model", async () => {
    const scenario = newScenario("retry-429");
    await script(scenario, [
      { type: "error", status: 429, headers: { "retry-after": "7" } },
      { type: "text", text: "finally" },
    ]);
    const call = args([userSays(scenario, "hi")]);
    const result = await callModel(call);
    expect(result.text).toBe("finally");
    expect(result.modelRef).toBe(PRIMARY);
    expect(result.fallback).toBeUndefined();
    expect(call.waits).toEqual([7000]);
    expect(result.attempts).toEqual([
      expect.objectContaining({ modelRef: PRIMARY, attempt: 1, kind: "rate_limit", status: 429 }),
    ]);
    expect((await recorded(scenario)).map((r) => r.api)).toEqual(["anthropic", "anthropic"]);
  });

  it("gives up three 500s on the primary with exponential backoff and answers from the fallback", async () => {
    const scenario = newScenario("fallback-500");
    await script(scenario, [
      { type: "error", status: 500 },
      { type: "error", status: 500 },
      { type: "error", status: 500 },
      { type: "text", text: "fallback here", usage: { input: 1_000_000, output: 100_000 } },
    ]);
    const call = args([userSays(scenario, "hi")]);
    const result = await callModel(call);
    expect(result.text).toBe("fallback here");
    expect(result.modelRef).toBe(FALLBACK);
    expect(result.fallback).toEqual({ selected: PRIMARY, reason: "server" });
    expect(call.waits).toEqual([1000, 2000]);
    expect(result.attempts.map((a) => [a.modelRef, a.kind])).toEqual([
      [PRIMARY, "server"],
      [PRIMARY, "server"],
      [PRIMARY, "server"],
    ]);
    // Priced at the fallback's configured cost: 1M input × $1.25 + 0.1M output × $10.
    expect(result.costUsd).toBeCloseTo(2.25, 6);
    expect((await recorded(scenario)).map((r) => r.api)).toEqual([
      "anthropic",
      "anthropic",
      "anthropic",
      "openai",
    ]);
  });

  it("fails over at once on an auth error, without retrying the primary", async () => {
    const scenario = newScenario("auth-failover");
    await script(scenario, [
      { type: "error", status: 401, message: "invalid x-api-key" },
      { type: "text", text: "from openai" },
    ]);
    const call = args([userSays(scenario, "hi")]);
    const result = await callModel(call);
    expect(result.modelRef).toBe(FALLBACK);
    expect(result.fallback).toEqual({ selected: PRIMARY, reason: "auth" });
    expect(call.waits).toEqual([]);
    expect((await recorded(scenario)).map((r) => r.api)).toEqual(["anthropic", "openai"]);
  });

  it("fails over when the primary's provider has no API key", async () => {
    const scenario = newScenario("missing-key");
    await script(scenario, [{ type: "text", text: "keyed fallback" }]);
    const result = await callModel(
      args([userSays(scenario, "hi")], {
        selection: { primary: "anthropic/claude-sonnet-4-5", fallbacks: [FALLBACK] },
        env: {},
      }),
    );
    expect(result.modelRef).toBe(FALLBACK);
    expect(result.attempts[0]).toMatchObject({
      modelRef: "anthropic/claude-sonnet-4-5",
      kind: "auth",
    });
    expect(result.attempts[0]!.message).toContain("ANTHROPIC_API_KEY");
  });

  it("does not fail over a bad request: the same request would fail anywhere", async () => {
    const scenario = newScenario("bad-request");
    await script(scenario, [
      { type: "error", status: 400, message: "tools.0.input_schema: invalid" },
      { type: "text", text: "must not be used" },
    ]);
    const error = await failure(callModel(args([userSays(scenario, "hi")])));
    expect(error.kind).toBe("bad_request");
    expect(error.status).toBe(400);
    expect((await recorded(scenario)).map((r) => r.api)).toEqual(["anthropic"]);
  });

  it("does not fail over a context overflow (compaction handles it)", async () => {
    const scenario = newScenario("context-overflow");
    await script(scenario, [
      { type: "error", status: 400, message: "prompt is too long: 250000 tokens > 200000 maximum" },
    ]);
    const error = await failure(callModel(args([userSays(scenario, "hi")])));
    expect(error.kind).toBe("context_overflow");
    expect((await recorded(scenario)).length).toBe(1);
  });

  it("times out a provider that never answers, retries, then fails over", async () => {
    const scenario = newScenario("timeout");
    await script(scenario, [{ type: "hang" }, { type: "hang" }, { type: "text", text: "awake" }]);
    const call = args([userSays(scenario, "hi")], { timeoutMs: 150, maxAttempts: 2 });
    const result = await callModel(call);
    expect(result.text).toBe("awake");
    expect(result.modelRef).toBe(FALLBACK);
    expect(result.attempts.map((a) => a.kind)).toEqual(["timeout", "timeout"]);
    expect(call.waits).toEqual([1000]);
  });

  it("skips a Retry-After longer than 60 s and fails over immediately", async () => {
    const scenario = newScenario("long-retry-after");
    await script(scenario, [
      { type: "error", status: 429, headers: { "retry-after": "3600" } },
      { type: "text", text: "other model" },
    ]);
    const call = args([userSays(scenario, "hi")]);
    const result = await callModel(call);
    expect(result.modelRef).toBe(FALLBACK);
    expect(call.waits).toEqual([]);
  });

  it("throws a ModelFailoverError listing every attempt when the whole chain fails", async () => {
    const scenario = newScenario("exhausted");
    await script(scenario, [
      { type: "error", status: 401 },
      { type: "error", status: 402, message: "billing: out of credits" },
    ]);
    const error = await failure(callModel(args([userSays(scenario, "hi")])));
    expect(error).toBeInstanceOf(ModelFailoverError);
    expect(error.kind).toBe("billing");
    expect((error as ModelFailoverError).attempts.map((a) => [a.modelRef, a.kind])).toEqual([
      [PRIMARY, "auth"],
      [FALLBACK, "billing"],
    ]);
    expect(error.message).toContain("All models failed");
  });

  it("with no onStreamReset, a failure after text was streamed ends the call (no second answer after a partial one)", async () => {
    const scenario = newScenario("stream-no-reset");
    await script(scenario, [
      { type: "stall", text: "I was saying" },
      { type: "text", text: "must not be used" },
    ]);
    const deltas: string[] = [];
    const call = args([userSays(scenario, "hi")], { timeoutMs: 150 });
    call.request.onTextDelta = (t) => deltas.push(t);
    const error = await failure(callModel(call));
    expect(error.kind).toBe("timeout");
    expect(deltas.join("")).toBe("I was saying");
    expect((await recorded(scenario)).length).toBe(1);
  });

  it("with onStreamReset, a mid-stream failure resets the stream and the retry's text is the answer", async () => {
    const scenario = newScenario("stream-reset");
    await script(scenario, [
      { type: "stream_error", text: "Half of a", errorType: "overloaded_error" },
      { type: "text", text: "Whole answer." },
    ]);
    const events: string[] = [];
    const onStreamReset = vi.fn(() => void events.push("<reset>"));
    const call = args([userSays(scenario, "hi")], { onStreamReset });
    call.request.onTextDelta = (t) => void events.push(t);
    const result = await callModel(call);
    expect(result.text).toBe("Whole answer.");
    expect(onStreamReset).toHaveBeenCalledTimes(1);
    expect(onStreamReset).toHaveBeenCalledWith({
      modelRef: PRIMARY,
      error: expect.objectContaining({ kind: "overloaded" }),
    });
    const afterReset = events.slice(events.indexOf("<reset>") + 1).join("");
    expect(events.slice(0, events.indexOf("<reset>")).join("")).toBe("Half of a");
    expect(afterReset).toBe("Whole answer.");
  });

  it("retries the whole chain when every candidate is only overloaded, with one notice after 30 s", async () => {
    const scenario = newScenario("overload-chain");
    const overloaded = { type: "error", status: 529 };
    await script(scenario, [
      overloaded,
      overloaded,
      overloaded,
      overloaded,
      overloaded,
      { type: "text", text: "capacity is back" },
    ]);
    const notices: string[] = [];
    const call = args([userSays(scenario, "hi")], {
      selection: { primary: PRIMARY, fallbacks: [] },
      maxAttempts: 1,
      onNotice: (t) => notices.push(t),
    });
    const result = await callModel(call);
    expect(result.text).toBe("capacity is back");
    expect(call.waits).toEqual([2500, 5000, 10000, 20000, 30000]);
    expect(notices).toEqual([OVERLOAD_WAIT_NOTICE]);
  });

  it("does not retry the chain for overload when overloadChainRetries is 0 (a tool already ran)", async () => {
    const scenario = newScenario("overload-no-chain");
    await script(scenario, [{ type: "error", status: 529 }]);
    const error = await failure(
      callModel(
        args([userSays(scenario, "hi")], {
          selection: { primary: PRIMARY, fallbacks: [] },
          maxAttempts: 1,
          overloadChainRetries: 0,
        }),
      ),
    );
    expect(error.kind).toBe("overloaded");
  });

  it("stops at once when the caller aborts", async () => {
    const scenario = newScenario("abort");
    const controller = new AbortController();
    await script(scenario, [{ type: "hang" }]);
    const call = args([userSays(scenario, "hi")]);
    call.request.signal = controller.signal;
    setTimeout(() => controller.abort(), 50);
    const error = await failure(callModel(call));
    expect(error.kind).toBe("aborted");
    expect((await recorded(scenario)).length).toBe(1);
  });
});

describe("callModel with no model configured", () => {
  it("says what to set", async () => {
    const error = await failure(
      callModel(args([{ role: "user", content: "hi" }], { selection: { fallbacks: [] }, env: {} })),
    );
    expect(error.kind).toBe("not_configured");
    expect(error.message).toBe(NO_MODEL_CONFIGURED_MESSAGE);
  });

  it("answers with the labelled demo fake when EDGECLAW_FAKE_MODEL=1", async () => {
    const deltas: string[] = [];
    const call = args([{ role: "user", content: "hello there" }], {
      selection: { fallbacks: [] },
      env: { EDGECLAW_FAKE_MODEL: "1" },
    });
    call.request.onTextDelta = (t) => deltas.push(t);
    const result = await callModel(call);
    expect(result.modelRef).toBe("fake/edgeclaw-demo");
    expect(result.text).toBe(`${FAKE_REPLY_PREFIX} You said: hello there`);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(result.text);
  });
});
