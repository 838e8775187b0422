import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "./helpers.ts";
import { configWith, sessionWithConfig, storedCalls } from "./budget-helpers.ts";
import { newScenario, testEnv } from "../agent/model-helpers.ts";
import { eq } from "drizzle-orm";
import { withDb } from "../../functions/db/client.ts";
import { modelCalls } from "../../functions/db/schema.ts";

/** Price of the suite's fakeanthropic/claude-test: input 3, output 15, cacheRead 0.3, cacheWrite 3.75 USD per million. */
function claudeTestPrice(
  input: number,
  output: number,
  cacheRead: number,
  cacheWrite: number,
): number {
  return (input * 3 + output * 15 + cacheRead * 0.3 + cacheWrite * 3.75) / 1_000_000;
}

describe("metering: every model call is recorded with its price", () => {
  it("a turn records provider, model, all four token counts and the configured price, attributed to channel and sender", async () => {
    const scenario = newScenario("meter-turn");
    await scriptModel(scenario, [
      {
        type: "text",
        text: "metered answer",
        usage: { input: 1200, output: 340, cacheRead: 500, cacheWrite: 80 },
      },
    ]);
    const key = `agent:main:meter-turn-${crypto.randomUUID()}`;
    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `hello [scenario:${scenario}]`)),
    );
    expect(events.at(-1)).toMatchObject({ type: "done", text: "metered answer" });
    const calls = await storedCalls(key);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      kind: "turn",
      provider: "fakeanthropic",
      model: "claude-test",
      channel: "webchat",
      sender_id: "tester",
      input_tokens: 1200,
      output_tokens: 340,
      cache_read_tokens: 500,
      cache_write_tokens: 80,
      outcome: "ok",
    });
    expect(calls[0]!.cost_usd).toBeCloseTo(claudeTestPrice(1200, 340, 500, 80), 12);
    // Mirrored to Postgres by the session's batched mirror, with agent and session attached.
    const mirrored = await waitFor(
      async () => {
        const rows = await withDb(testEnv, (db) =>
          db.select().from(modelCalls).where(eq(modelCalls.sessionKey, key)),
        );
        return rows.length ? rows : undefined;
      },
      15_000,
      "the mirrored model call",
    );
    expect(mirrored[0]).toMatchObject({
      agentId: "main",
      kind: "turn",
      provider: "fakeanthropic",
      model: "claude-test",
      inputTokens: 1200,
      senderId: "tester",
    });
    expect(mirrored[0]!.costUsd).toBeCloseTo(claudeTestPrice(1200, 340, 500, 80), 12);
  });

  it("a failed attempt and its successful retry are both metered (the failure at zero tokens)", async () => {
    const scenario = newScenario("meter-retry");
    await scriptModel(scenario, [
      { type: "error", status: 500, message: "boom" },
      { type: "text", text: "second time lucky", usage: { input: 10, output: 5 } },
    ]);
    const key = `agent:main:meter-retry-${crypto.randomUUID()}`;
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `hello [scenario:${scenario}]`)),
    );
    const calls = await storedCalls(key);
    expect(calls.map((call) => [call.outcome, call.input_tokens, call.output_tokens])).toEqual([
      ["error", 0, 0],
      ["ok", 10, 5],
    ]);
  });

  it("compaction (/compact) is metered as its own kind", async () => {
    const scenario = newScenario("meter-compact");
    await scriptModel(scenario, [
      { type: "text", text: "first answer", usage: { input: 100, output: 10 } },
      { type: "text", text: "second answer", usage: { input: 120, output: 12 } },
      { type: "text", text: "Summary of the chat.", usage: { input: 300, output: 30 } },
    ]);
    const key = `agent:main:meter-compact-${crypto.randomUUID()}`;
    const config = configWith({
      agents: {
        defaults: {
          model: { primary: "fakeanthropic/claude-test" },
          compaction: { keepRecentTokens: 1 },
        },
      },
    });
    const stub = await sessionWithConfig(key, config);
    await collectRunEvents(await stub.chat(webchatEvent(key, `one [scenario:${scenario}]`)));
    await collectRunEvents(await stub.chat(webchatEvent(key, `two [scenario:${scenario}]`)));
    await collectRunEvents(await stub.chat(webchatEvent(key, `/compact`)));
    await waitFor(
      async () => (await modelRequests(scenario)).length >= 3,
      10_000,
      "the compaction call",
    );
    const calls = await storedCalls(key);
    expect(calls.map((call) => call.kind)).toEqual(["turn", "turn", "compaction"]);
    expect(calls[2]!.cost_usd).toBeCloseTo(claudeTestPrice(300, 30, 0, 0), 12);
  });
});
