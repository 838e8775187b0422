import { describe, expect, it } from "vitest";
import { costUsd } from "../../functions/agent/model-cost.ts";
import {
  CLOUD_IDLE_TIMEOUT_MS,
  listConfiguredModels,
  modelSelectionFor,
  parseModelRef,
  resolveModel,
  SELF_HOSTED_IDLE_TIMEOUT_MS,
} from "../../functions/agent/model-resolve.ts";
import { ModelError } from "../../functions/agent/types.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";

function thrown(fn: () => unknown): ModelError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    return error as ModelError;
  }
  throw new Error("expected a ModelError");
}

describe("model refs", () => {
  it("split at the first slash, so OpenRouter-style ids keep their namespace", () => {
    expect(parseModelRef("openrouter/moonshotai/kimi-k2")).toEqual({
      providerId: "openrouter",
      modelId: "moonshotai/kimi-k2",
    });
    expect(parseModelRef("anthropic/claude-sonnet-4-5")).toEqual({
      providerId: "anthropic",
      modelId: "claude-sonnet-4-5",
    });
    expect(parseModelRef("no-slash")).toBeUndefined();
    expect(parseModelRef("/model")).toBeUndefined();
  });
});

describe("resolveModel", () => {
  it("resolves the built-in anthropic provider with its key from ANTHROPIC_API_KEY", () => {
    const model = resolveModel(
      parseConfig({}),
      { ANTHROPIC_API_KEY: "sk-ant-test" },
      "anthropic/claude-sonnet-4-5",
    );
    expect(model).toMatchObject({
      providerId: "anthropic",
      modelId: "claude-sonnet-4-5",
      api: "anthropic-messages",
      baseUrl: "https://api.anthropic.com",
      apiKey: "sk-ant-test",
      native: true,
      idleTimeoutMs: CLOUD_IDLE_TIMEOUT_MS,
      maxTokens: 8192,
      contextWindow: 200_000,
    });
  });

  it("resolves the built-in openai provider and lets the config move its base URL", () => {
    const config = parseConfig({
      models: {
        providers: { openai: { baseUrl: "https://gateway.ai.cloudflare.com/v1/acct/gw/openai" } },
      },
    });
    const model = resolveModel(config, { OPENAI_API_KEY: "sk-test" }, "openai/gpt-5.5");
    expect(model).toMatchObject({
      api: "openai-completions",
      baseUrl: "https://gateway.ai.cloudflare.com/v1/acct/gw/openai",
      native: false,
    });
  });

  it("treats a custom provider without api as openai-completions, keyless when it names no key", () => {
    const config = parseConfig({
      models: { providers: { ollama: { baseUrl: "http://127.0.0.1:11434/v1" } } },
    });
    const model = resolveModel(config, {}, "ollama/llama3.3");
    expect(model).toMatchObject({
      api: "openai-completions",
      apiKey: undefined,
      idleTimeoutMs: SELF_HOSTED_IDLE_TIMEOUT_MS,
    });
  });

  it("resolves apiKey SecretRefs and ${VAR} strings, and reads per-model limits, cost and timeoutSeconds", () => {
    const config = parseConfig({
      models: {
        providers: {
          lmstudio: {
            baseUrl: "http://localhost:1234/v1",
            apiKey: "${LM_API_TOKEN}",
            timeoutSeconds: 900,
            headers: { "x-extra": "1" },
            models: [
              {
                id: "local",
                contextWindow: 32_000,
                maxTokens: 2048,
                cost: { input: 1, output: 2 },
              },
            ],
          },
          router: {
            baseUrl: "https://openrouter.ai/api/v1",
            apiKey: { source: "env", id: "ROUTER_KEY" },
          },
        },
      },
    });
    const env = { LM_API_TOKEN: "lm-token", ROUTER_KEY: "or-key" };
    expect(resolveModel(config, env, "lmstudio/local")).toMatchObject({
      apiKey: "lm-token",
      idleTimeoutMs: 900_000,
      contextWindow: 32_000,
      maxTokens: 2048,
      cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
      headers: { "x-extra": "1" },
    });
    expect(resolveModel(config, env, "router/moonshotai/kimi-k2")).toMatchObject({
      apiKey: "or-key",
      modelId: "moonshotai/kimi-k2",
    });
  });

  it("reports a missing key as auth (so failover moves on) and names the variable to set", () => {
    const config = parseConfig({
      models: {
        providers: {
          router: {
            baseUrl: "https://openrouter.ai/api/v1",
            apiKey: { source: "env", id: "ROUTER_KEY" },
          },
        },
      },
    });
    expect(
      thrown(() => resolveModel(parseConfig({}), {}, "anthropic/claude-sonnet-4-5")),
    ).toMatchObject({ kind: "auth" });
    const error = thrown(() => resolveModel(config, {}, "router/x"));
    expect(error.kind).toBe("auth");
    expect(error.message).toContain("ROUTER_KEY");
  });

  it("rejects an unknown provider and a custom provider without baseUrl as not_configured", () => {
    expect(thrown(() => resolveModel(parseConfig({}), {}, "mystery/model")).kind).toBe(
      "not_configured",
    );
    const config = parseConfig({ models: { providers: { vllm: { api: "openai-completions" } } } });
    expect(thrown(() => resolveModel(config, {}, "vllm/x")).message).toContain(
      "models.providers.vllm.baseUrl",
    );
  });
});

describe("modelSelectionFor", () => {
  const config = parseConfig({
    agents: {
      defaults: {
        model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5.5"] },
      },
      list: [
        { id: "strict", model: "openai/gpt-5.5" },
        {
          id: "chained",
          model: { primary: "openai/gpt-5.5", fallbacks: ["anthropic/claude-haiku-4-5"] },
        },
        { id: "plain" },
      ],
    },
  });

  it("uses the default chain, an agent's own chain, and keeps an agent's plain model strict", () => {
    const origin = "config";
    expect(modelSelectionFor(config, {})).toEqual({
      primary: "anthropic/claude-sonnet-4-5",
      fallbacks: ["openai/gpt-5.5"],
      origin,
    });
    expect(modelSelectionFor(config, {}, "plain")).toEqual({
      primary: "anthropic/claude-sonnet-4-5",
      fallbacks: ["openai/gpt-5.5"],
      origin,
    });
    expect(modelSelectionFor(config, {}, "strict")).toEqual({
      primary: "openai/gpt-5.5",
      fallbacks: [],
      origin,
    });
    expect(modelSelectionFor(config, {}, "chained")).toEqual({
      primary: "openai/gpt-5.5",
      fallbacks: ["anthropic/claude-haiku-4-5"],
      origin,
    });
  });

  it("EDGECLAW_FAKE_MODEL=1 wins over every model the config names, for every agent", () => {
    // The README's path: edgeclaw.example.json5 (which names Claude and GPT) plus the demo switch.
    const config = parseConfig({
      agents: {
        defaults: {
          model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5.2"] },
        },
        list: [{ id: "ops", model: "openai/gpt-5.5" }],
      },
    });
    const demo = { primary: "fake/edgeclaw-demo", fallbacks: [], origin: "demo" };
    const env = { EDGECLAW_FAKE_MODEL: "1", OPENAI_API_KEY: "k" };
    expect(modelSelectionFor(config, env)).toEqual(demo);
    expect(modelSelectionFor(config, env, "ops")).toEqual(demo);
    expect(modelSelectionFor(config, { OPENAI_API_KEY: "k" }, "ops").primary).toBe(
      "openai/gpt-5.5",
    );
  });

  it("with no model in the config, a provider key alone selects that provider's current model", () => {
    const none = parseConfig({});
    const anthropic = modelSelectionFor(none, { ANTHROPIC_API_KEY: "sk-ant" });
    expect(anthropic).toMatchObject({ fallbacks: [], origin: "key-default" });
    expect(anthropic.primary).toMatch(/^anthropic\/claude-sonnet-/);
    const openai = modelSelectionFor(none, { OPENAI_API_KEY: "sk" });
    expect(openai.primary).toMatch(/^openai\/gpt-/);
    // Both keys: Anthropic answers, OpenAI takes over when it fails.
    expect(modelSelectionFor(none, { ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o" })).toEqual({
      primary: anthropic.primary,
      fallbacks: [openai.primary],
      origin: "key-default",
    });
    // A key given in the config (a SecretRef under the built-in provider) counts as well.
    const refConfig = parseConfig({
      models: { providers: { openai: { apiKey: { source: "env", id: "MY_OPENAI" } } } },
    });
    expect(modelSelectionFor(refConfig, { MY_OPENAI: "sk" }).primary).toBe(openai.primary);
    // Nothing: no primary (replies say "No model configured").
    expect(modelSelectionFor(none, {})).toEqual({ fallbacks: [] });
  });

  it("prefers the demo model when it is switched on explicitly, even with a key in the environment", () => {
    expect(
      modelSelectionFor(parseConfig({}), { ANTHROPIC_API_KEY: "sk-ant", EDGECLAW_FAKE_MODEL: "1" }),
    ).toEqual({
      primary: "fake/edgeclaw-demo",
      fallbacks: [],
      origin: "demo",
    });
  });
});

describe("listConfiguredModels", () => {
  it("lists primary, fallbacks, agent models, catalogs and the demo model, each with availability", () => {
    const config = parseConfig({
      agents: {
        defaults: { model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["local/qwen"] } },
        list: [{ id: "a", model: "openai/gpt-5.5" }],
      },
      models: {
        providers: {
          local: {
            baseUrl: "http://127.0.0.1:8000/v1",
            models: [{ id: "qwen", name: "Qwen" }, { id: "other" }],
          },
        },
      },
    });
    const models = listConfiguredModels(config, {
      ANTHROPIC_API_KEY: "k",
      EDGECLAW_FAKE_MODEL: "1",
    });
    const byRef = Object.fromEntries(models.map((m) => [m.ref, m]));
    expect(Object.keys(byRef)).toEqual([
      "anthropic/claude-sonnet-4-5",
      "local/qwen",
      "openai/gpt-5.5",
      "local/other",
      "fake/edgeclaw-demo",
    ]);
    expect(byRef["anthropic/claude-sonnet-4-5"]).toMatchObject({
      available: true,
      roles: ["primary"],
      api: "anthropic-messages",
    });
    expect(byRef["local/qwen"]).toMatchObject({
      available: true,
      roles: ["fallback", "catalog"],
      name: "Qwen",
    });
    expect(byRef["openai/gpt-5.5"]).toMatchObject({ available: false, roles: ["agent"] });
    expect(byRef["openai/gpt-5.5"]!.unavailableReason).toContain("OPENAI_API_KEY");
    expect(byRef["fake/edgeclaw-demo"]).toMatchObject({
      available: true,
      roles: ["demo"],
      api: "fake",
    });
  });

  it("leaves the demo model out unless EDGECLAW_FAKE_MODEL=1", () => {
    expect(listConfiguredModels(parseConfig({}), {})).toEqual([]);
  });
});

describe("costUsd", () => {
  it("prices usage per million tokens", () => {
    const usage = {
      inputTokens: 2_000_000,
      outputTokens: 500_000,
      cacheReadTokens: 1_000_000,
      cacheWriteTokens: 100_000,
    };
    expect(costUsd(usage, { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })).toBeCloseTo(
      6 + 7.5 + 0.3 + 0.375,
      9,
    );
  });
});
