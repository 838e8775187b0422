import { describe, expect, it } from "vitest";
import { collectRunEvents, modelRequests, scriptModel, webchatEvent } from "./helpers.ts";
import { budgetStub, configWith, sessionWithConfig, storedCalls } from "./budget-helpers.ts";
import { fakeModelUrl, newScenario } from "../agent/model-helpers.ts";
import { windowsFor } from "../../functions/agent/budget-scopes.ts";
import { budgetsSchema, type ScopeLimits } from "../../functions/config/budgets.ts";
import type { RunEvent } from "../../durable-objects/session-api.ts";

/**
 * A USD budget over a model with no price (issue 18, item 3). Before, such a model was priced $0:
 * a $0.00000001 session cap let two 100k-token calls through and recorded $0. Now the built-in
 * default models carry their providers' prices, a call with no price under a USD cap is refused
 * before it is made (one notice naming the key to set) unless `budgets.allowUnpricedModels`, and
 * token caps still stop an opted-in operator's unpriced model. Real BudgetDO, real SessionDO, the
 * fake model server on loopback.
 */

// biome-ignore lint/suspicious/noExplicitAny: the suite's config is edited as plain JSON.
type Json = Record<string, any>;

/** The suite's config with `edit` applied (the primary model, providers, budgets). */
function suiteConfigWith(edit: (config: Json) => void): string {
  const config = JSON.parse(configWith({})) as Json;
  edit(config);
  return JSON.stringify(config);
}

/** A provider block on the fake model server for a built-in provider id (its base URL overridden, as for a proxy). */
function builtInOnFake(providerId: "anthropic" | "openai"): Json {
  return providerId === "anthropic"
    ? { baseUrl: fakeModelUrl() }
    : { baseUrl: `${fakeModelUrl()}/v1`, apiKey: "test-openai-key" };
}

function endOf(events: RunEvent[]): RunEvent | undefined {
  return events.find((event) => event.type === "done" || event.type === "error");
}

function textOf(events: RunEvent[]): string {
  const end = endOf(events);
  return end?.type === "error" ? end.message : end?.type === "done" ? end.text : "";
}

async function say(stub: Awaited<ReturnType<typeof sessionWithConfig>>, key: string, text: string) {
  return collectRunEvents(await stub.chat(webchatEvent(key, text)));
}

const usage100k = { input: 100_000, output: 2_000 };
const tinyCap = { session: { day: { usd: 0.00000001 } } };

async function sessionState(key: string, limits: ScopeLimits) {
  const windows = windowsFor(limits, budgetsSchema.parse({}), Date.now());
  const [state] = await budgetStub(`session:${key}`).state({ windows, now: Date.now() });
  return state!;
}

describe("budgets: a model with no price under a USD cap", () => {
  it("a $0.00000001 session cap refuses an unpriced catalog model and an unlisted built-in model before any call, with one notice naming the key", async () => {
    const cases = [
      {
        ref: "fakeopenai/gpt-unpriced",
        key: "models.providers.fakeopenai.models[]",
        edit: (config: Json) => {
          config.models.providers.fakeopenai.models.push({ id: "gpt-unpriced" });
        },
      },
      {
        ref: "openai/gpt-unlisted",
        key: "models.providers.openai.models[]",
        edit: (config: Json) => {
          config.models.providers.openai = builtInOnFake("openai");
        },
      },
    ];
    for (const { ref, key: catalogKey, edit } of cases) {
      const scenario = newScenario("unpriced-refused");
      await scriptModel(scenario, [
        { type: "text", text: "costly answer", usage: usage100k },
        { type: "text", text: "costly answer", usage: usage100k },
      ]);
      const config = suiteConfigWith((c) => {
        edit(c);
        c.agents.defaults.model = { primary: ref };
        c.budgets = tinyCap;
      });
      const key = `agent:main:unpriced-${crypto.randomUUID()}`;
      const stub = await sessionWithConfig(key, config);
      const first = await say(stub, key, `hello [scenario:${scenario}]`);
      const second = await say(stub, key, `hello again [scenario:${scenario}]`);
      expect(await modelRequests(scenario), ref).toHaveLength(0);
      expect(await storedCalls(key)).toHaveLength(0);
      for (const events of [first, second]) {
        expect(endOf(events)).toMatchObject({ type: "error", code: "budget" });
        const notice = textOf(events);
        expect(notice).toContain(`the model ${ref} has no price`);
        expect(notice).toContain(`${catalogKey}: { id: "${ref.split("/")[1]}", cost:`);
        expect(notice).toContain("budgets.allowUnpricedModels: true");
        expect(notice).toMatch(/session daily spending limit/);
      }
      // One reply per message: the notice, once each.
      const assistant = (await stub.history()).filter((turn) => turn.role === "assistant");
      expect(assistant.map((turn) => turn.text)).toEqual([textOf(first), textOf(second)]);
      const state = await sessionState(key, tinyCap.session);
      expect(state.spentUsd).toBe(0);
      expect(state.spentTokens).toBe(0);
      expect(state.reservedTokens).toBe(0);
    }
  });

  it("a USD cap raised at run time over a tokens-only config (budgets raise) refuses the unpriced model too: the BudgetDO decides", async () => {
    const scenario = newScenario("unpriced-raised");
    await scriptModel(scenario, [{ type: "text", text: "never sent", usage: usage100k }]);
    const limits = { day: { tokens: 1_000_000 } };
    const config = suiteConfigWith((c) => {
      c.models.providers.fakeopenai.models.push({ id: "gpt-unpriced" });
      c.agents.defaults.model = { primary: "fakeopenai/gpt-unpriced" };
      c.budgets = { session: limits };
    });
    const key = `agent:main:unpriced-raised-${crypto.randomUUID()}`;
    const [window] = windowsFor(limits, budgetsSchema.parse({}), Date.now());
    await budgetStub(`session:${key}`).raise({ window: window!, usd: 5, now: Date.now() });
    const stub = await sessionWithConfig(key, config);
    const events = await say(stub, key, `hello [scenario:${scenario}]`);
    expect(endOf(events)).toMatchObject({ type: "error", code: "budget" });
    expect(textOf(events)).toContain("the model fakeopenai/gpt-unpriced has no price");
    expect(await modelRequests(scenario)).toHaveLength(0);
    expect((await sessionState(key, limits)).reservedTokens).toBe(0);
  });

  it("with budgets.allowUnpricedModels the operator gets the call: it counts $0 and its tokens", async () => {
    const scenario = newScenario("unpriced-allowed");
    await scriptModel(scenario, [{ type: "text", text: "allowed answer", usage: usage100k }]);
    const budgets = { allowUnpricedModels: true, ...tinyCap };
    const config = suiteConfigWith((c) => {
      c.models.providers.fakeopenai.models.push({ id: "gpt-unpriced" });
      c.agents.defaults.model = { primary: "fakeopenai/gpt-unpriced" };
      c.budgets = budgets;
    });
    const key = `agent:main:unpriced-ok-${crypto.randomUUID()}`;
    const stub = await sessionWithConfig(key, config);
    const events = await say(stub, key, `hello [scenario:${scenario}]`);
    expect(endOf(events)).toMatchObject({ type: "done", text: "allowed answer" });
    expect(await modelRequests(scenario)).toHaveLength(1);
    const calls = await storedCalls(key);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ model: "gpt-unpriced", input_tokens: 100_000, cost_usd: 0 });
    const state = await sessionState(key, tinyCap.session);
    expect(state.spentUsd).toBe(0);
    expect(state.spentTokens).toBe(102_000);
    expect(state.reservedTokens).toBe(0);
  });

  it("an opted-in operator's unpriced model is still stopped by a token cap: the next call is refused before it is made", async () => {
    const scenario = newScenario("unpriced-tokens");
    await scriptModel(scenario, [
      { type: "text", text: "first answer", usage: { input: 190_000, output: 5_000 } },
      { type: "text", text: "never sent", usage: usage100k },
    ]);
    const limits = { day: { usd: 5, tokens: 200_000 } };
    const config = suiteConfigWith((c) => {
      c.models.providers.fakeopenai.models.push({ id: "gpt-unpriced" });
      c.agents.defaults.model = { primary: "fakeopenai/gpt-unpriced" };
      c.budgets = { allowUnpricedModels: true, session: limits };
    });
    const key = `agent:main:unpriced-tokens-${crypto.randomUUID()}`;
    const stub = await sessionWithConfig(key, config);
    const first = await say(stub, key, `hello [scenario:${scenario}]`);
    expect(endOf(first)).toMatchObject({ type: "done", text: "first answer" });
    const second = await say(stub, key, `and again [scenario:${scenario}]`);
    expect(endOf(second)).toMatchObject({ type: "error", code: "budget" });
    expect(textOf(second)).toMatch(
      /session daily limit of 200,000 tokens \(spent 195,000 tokens\) has been reached/,
    );
    expect(await modelRequests(scenario)).toHaveLength(1);
    const state = await sessionState(key, limits);
    expect(state.spentTokens).toBe(195_000);
    expect(state.reservedTokens).toBe(0);
  });
});

describe("budgets: the built-in default models carry their providers' prices", () => {
  it("the key-only quick start (ANTHROPIC_API_KEY, no model named) is charged Claude Sonnet 5's price, in the call record and the BudgetDO", async () => {
    const scenario = newScenario("priced-builtin");
    const usage = { input: 100_000, output: 2_000, cacheRead: 5_000, cacheWrite: 1_000 };
    await scriptModel(scenario, [{ type: "text", text: "priced answer", usage }]);
    const limits = { day: { usd: 1 } };
    const config = suiteConfigWith((c) => {
      // No model named: the Anthropic key alone selects anthropic/claude-sonnet-5.
      c.agents.defaults.model = {};
      c.models.providers.anthropic = builtInOnFake("anthropic");
      c.budgets = { session: limits };
    });
    const key = `agent:main:priced-builtin-${crypto.randomUUID()}`;
    const stub = await sessionWithConfig(key, config, { ANTHROPIC_API_KEY: "test-anthropic-key" });
    const events = await say(stub, key, `hello [scenario:${scenario}]`);
    expect(endOf(events)).toMatchObject({ type: "done", text: "priced answer" });
    // $2 input, $10 output, $0.20 cache read, $2.50 cache write per million (built-in-prices.ts).
    const price = (100_000 * 2 + 2_000 * 10 + 5_000 * 0.2 + 1_000 * 2.5) / 1_000_000;
    const calls = await storedCalls(key);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ provider: "anthropic", model: "claude-sonnet-5" });
    expect(calls[0]!.cost_usd).toBeCloseTo(price, 12);
    const state = await sessionState(key, limits);
    expect(state.spentUsd).toBeCloseTo(price, 12);
    expect(state.reservedUsd).toBe(0);
  });

  it("openai/gpt-5.6-sol is charged its list price (cached input at the cached rate)", async () => {
    const scenario = newScenario("priced-builtin-openai");
    await scriptModel(scenario, [
      {
        type: "text",
        text: "priced answer",
        usage: { input: 80_000, output: 3_000, cacheRead: 20_000 },
      },
    ]);
    const limits = { day: { usd: 2 } };
    const config = suiteConfigWith((c) => {
      c.agents.defaults.model = { primary: "openai/gpt-5.6-sol" };
      c.models.providers.openai = builtInOnFake("openai");
      c.budgets = { session: limits };
    });
    const key = `agent:main:priced-openai-${crypto.randomUUID()}`;
    const stub = await sessionWithConfig(key, config);
    const events = await say(stub, key, `hello [scenario:${scenario}]`);
    expect(endOf(events)).toMatchObject({ type: "done", text: "priced answer" });
    // $5 input, $30 output, $0.50 cached input per million (built-in-prices.ts).
    const price = (80_000 * 5 + 3_000 * 30 + 20_000 * 0.5) / 1_000_000;
    const calls = await storedCalls(key);
    expect(calls[0]).toMatchObject({ provider: "openai", model: "gpt-5.6-sol" });
    expect(calls[0]!.cost_usd).toBeCloseTo(price, 12);
    expect((await sessionState(key, limits)).spentUsd).toBeCloseTo(price, 12);
  });
});
