import { describe, expect, it } from "vitest";
import {
  modelPriceFor,
  modelSelectionFor,
  resolveModel,
} from "../../functions/agent/model-resolve.ts";
import { BUILT_IN_MODEL_PRICES } from "../../functions/agent/providers/built-in-prices.ts";
import { FAKE_MODEL_REF } from "../../functions/agent/providers/fake.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";

/**
 * Where a model's price comes from: the catalog's `cost`, else the built-in table of the providers'
 * default models (functions/agent/providers/built-in-prices.ts), else nowhere — and then a USD
 * budget refuses the model's calls instead of counting them as free.
 */
const KEYS = { ANTHROPIC_API_KEY: "sk-ant-test", OPENAI_API_KEY: "sk-test" };

describe("model prices", () => {
  it("every model a provider's key alone selects has a built-in price", () => {
    const selection = modelSelectionFor(parseConfig({}), KEYS);
    const keyed = [selection.primary!, ...selection.fallbacks];
    expect(keyed.sort()).toEqual(["anthropic/claude-sonnet-5", "openai/gpt-5.6-sol"]);
    for (const ref of keyed) {
      const model = resolveModel(parseConfig({}), KEYS, ref);
      expect(model.cost, ref).toEqual(BUILT_IN_MODEL_PRICES[ref]);
      expect(model.cost!.input, ref).toBeGreaterThan(0);
      expect(model.cost!.output, ref).toBeGreaterThan(model.cost!.input);
    }
  });

  it("the catalog's cost wins over the table; a catalog entry without cost keeps the table's price", () => {
    const catalogPriced = parseConfig({
      models: {
        providers: {
          anthropic: { models: [{ id: "claude-sonnet-5", cost: { input: 1, output: 4 } }] },
        },
      },
    });
    expect(resolveModel(catalogPriced, KEYS, "anthropic/claude-sonnet-5").cost).toEqual({
      input: 1,
      output: 4,
      cacheRead: 0,
      cacheWrite: 0,
    });
    const limitsOnly = parseConfig({
      models: { providers: { openai: { models: [{ id: "gpt-5.6-sol", maxTokens: 4096 }] } } },
    });
    expect(resolveModel(limitsOnly, KEYS, "openai/gpt-5.6-sol").cost).toEqual({
      input: 5,
      output: 30,
      cacheRead: 0.5,
      cacheWrite: 6.25,
    });
  });

  it("a model neither prices has no cost (not $0); an explicit $0 cost and the demo model are priced", () => {
    const config = parseConfig({
      models: {
        providers: {
          ollama: {
            baseUrl: "http://127.0.0.1:11434/v1",
            models: [{ id: "llama3.3" }, { id: "qwen3", cost: {} }],
          },
        },
      },
    });
    expect(resolveModel(config, KEYS, "openai/gpt-unlisted").cost).toBeUndefined();
    expect(resolveModel(config, KEYS, "ollama/llama3.3").cost).toBeUndefined();
    expect(resolveModel(config, KEYS, "ollama/qwen3").cost).toEqual({
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(resolveModel(config, KEYS, FAKE_MODEL_REF).cost).toMatchObject({ input: 0, output: 0 });
  });

  it("modelPriceFor gives the same price as resolveModel, with no key at all (config check runs offline)", () => {
    const config = parseConfig({
      models: { providers: { Local: { baseUrl: "http://127.0.0.1:1/v1", models: [{ id: "m" }] } } },
    });
    for (const ref of ["anthropic/claude-sonnet-5", "OpenAI/gpt-5.6-sol", "local/m", "openai/x"]) {
      expect(modelPriceFor(config, ref), ref).toEqual(resolveModel(config, KEYS, ref).cost);
    }
  });
});
