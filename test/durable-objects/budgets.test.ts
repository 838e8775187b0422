import { describe, expect, it } from "vitest";
import { collectRunEvents, modelRequests, scriptModel, waitFor, webchatEvent } from "./helpers.ts";
import { budgetStub, configWith, sessionWithConfig, storedCalls } from "./budget-helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import { slackCalls } from "../channels/slack/helpers.ts";
import { windowsFor } from "../../functions/agent/budget-scopes.ts";
import { budgetsSchema } from "../../functions/config/budgets.ts";
import type { RunEvent } from "../../durable-objects/session-api.ts";

function endOf(events: RunEvent[]): RunEvent | undefined {
  return events.find((event) => event.type === "done" || event.type === "error");
}

function noticeOf(events: RunEvent[]): string {
  const end = endOf(events);
  return end?.type === "error" ? end.message : end?.type === "done" ? end.text : "";
}

/**
 * The suite's primary model with a huge maxTokens, so a call's worst case is dominated by its
 * output allowance: 1,000,000 × $15/M = $15 plus the prompt (well under $1). A $50 cap then fits
 * exactly three calls in flight (3 × ≤ $16 ≤ $50 < 4 × $15).
 */
function bigOutputModels(): Record<string, unknown> {
  const base = JSON.parse(configWith({})) as {
    models: { providers: Record<string, { models: Array<Record<string, unknown>> }> };
  };
  const anthropic = base.models.providers.fakeanthropic!;
  return {
    ...base.models,
    providers: {
      ...base.models.providers,
      fakeanthropic: { ...anthropic, models: [{ ...anthropic.models[0], maxTokens: 1_000_000 }] },
    },
  };
}

describe("budgets: checked before every model call", () => {
  it("at the cap the run stops before the call: the model sees nothing, the user gets one notice per message, the operator one alert", async () => {
    const scenario = newScenario("budget-capped");
    const alertChannel = `CALERT${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
    const key = `agent:main:budget-capped-${crypto.randomUUID()}`;
    // No call fits under a millionth of a cent.
    const config = configWith({
      budgets: {
        session: { day: { usd: 0.00000001 } },
        alertTarget: { channel: "slack", to: alertChannel },
      },
    });
    const stub = await sessionWithConfig(key, config);
    const first = await collectRunEvents(
      await stub.chat(webchatEvent(key, `hello [scenario:${scenario}]`)),
    );
    const second = await collectRunEvents(
      await stub.chat(webchatEvent(key, `hello again [scenario:${scenario}]`)),
    );
    expect(await modelRequests(scenario)).toHaveLength(0);
    expect(await storedCalls(key)).toHaveLength(0);
    for (const events of [first, second]) {
      expect(endOf(events)).toMatchObject({ type: "error", code: "budget" });
      expect(noticeOf(events)).toMatch(/session daily limit of \$0\.00 .* has been reached/);
      expect(events.filter((event) => event.type === "notice")).toHaveLength(0);
    }
    // Each message got exactly one reply: its notice, once.
    const history = await stub.history();
    expect(history.filter((turn) => turn.role === "assistant").map((turn) => turn.text)).toEqual([
      noticeOf(first),
      noticeOf(second),
    ]);
    const alerts = await waitFor(async () => {
      const calls = await slackCalls("chat.postMessage", alertChannel);
      return calls.length ? calls : undefined;
    }, 15_000);
    // Give a second alert every chance to show up; there must not be one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await slackCalls("chat.postMessage", alertChannel)).toHaveLength(alerts.length);
    expect(alerts).toHaveLength(1);
    expect(String(alerts[0]!.args.text)).toMatch(/Budget cap reached — session:/);
  });

  it("20 sessions at once against a cap that fits 3 calls: exactly 3 reach the model, spend stays under the cap", async () => {
    const scenario = newScenario("budget-burst");
    const agentId = `burst${crypto.randomUUID().slice(0, 8)}`;
    // Each answer uses its whole output allowance, so whether the others ask while it is in flight
    // (held as a reservation) or after it settled (charged), the room it took stays taken.
    await scriptModel(
      scenario,
      Array.from({ length: 20 }, () => ({
        type: "text",
        text: "paid answer",
        delayMs: 500,
        usage: { input: 1000, output: 1_000_000 },
      })),
    );
    const config = configWith({
      models: bigOutputModels(),
      budgets: { agent: { day: { usd: 50 } } },
    });
    const keys = Array.from({ length: 20 }, (_, i) => `agent:${agentId}:burst-${i}`);
    const stubs = await Promise.all(keys.map((key) => sessionWithConfig(key, config)));
    const results = await Promise.all(
      stubs.map(async (stub, i) =>
        collectRunEvents(
          await stub.chat({ ...webchatEvent(keys[i]!, `go [scenario:${scenario}]`), agentId }),
        ),
      ),
    );
    expect(await modelRequests(scenario)).toHaveLength(3);
    const answered = results.filter((events) => endOf(events)?.type === "done");
    const refused = results.filter(
      (events) => endOf(events)?.type === "error" && noticeOf(events).includes("agent daily limit"),
    );
    expect(answered).toHaveLength(3);
    expect(refused).toHaveLength(17);
    const windows = windowsFor({ day: { usd: 50 } }, budgetsSchema.parse({}), Date.now());
    const [state] = await budgetStub(`agent:${agentId}`).state({ windows, now: Date.now() });
    expect(state!.reservedUsd).toBe(0);
    expect(state!.spentUsd).toBeCloseTo(3 * ((1000 * 3 + 1_000_000 * 15) / 1_000_000), 9);
    expect(state!.spentUsd).toBeLessThanOrEqual(50);
  });

  it("a reservation never settled (its caller crashed) expires after reservationTtlSeconds and stops holding the budget", async () => {
    const scope = `session:expiry-${crypto.randomUUID()}`;
    const stub = budgetStub(scope);
    const t0 = Date.UTC(2026, 10, 30, 12, 0, 0);
    const windows = windowsFor({ day: { usd: 1 } }, budgetsSchema.parse({}), t0);
    expect(
      await stub.reserve({
        id: "crashed-call",
        windows,
        usd: 0.8,
        tokens: 10,
        now: t0,
        ttlMs: 900_000,
      }),
    ).toEqual({ ok: true });
    // Held: a second call that would fit alone is refused while the first is outstanding.
    expect(
      await stub.reserve({
        id: "next-call",
        windows,
        usd: 0.5,
        tokens: 10,
        now: t0 + 899_999,
        ttlMs: 900_000,
      }),
    ).toMatchObject({ ok: false, unit: "usd" });
    // The first never settles; at its expiry it stops counting.
    expect(
      await stub.reserve({
        id: "next-call",
        windows,
        usd: 0.5,
        tokens: 10,
        now: t0 + 900_000,
        ttlMs: 900_000,
      }),
    ).toEqual({ ok: true });
    const [state] = await stub.state({ windows, now: t0 + 900_001 });
    expect(state).toMatchObject({ spentUsd: 0, reservedUsd: 0.5 });
  });

  it("settling charges the actual cost and releases the rest of the worst case; warnAt warns once per period", async () => {
    const stub = budgetStub(`global-test-${crypto.randomUUID()}`);
    const t0 = Date.UTC(2026, 10, 30, 12, 0, 0);
    const windows = windowsFor({ day: { usd: 1 }, warnAt: 0.5 }, budgetsSchema.parse({}), t0);
    await stub.reserve({ id: "a", windows, usd: 0.9, tokens: 0, now: t0, ttlMs: 60_000 });
    expect(await stub.settle({ id: "a", windows, usd: 0.3, tokens: 0, now: t0 + 1 })).toEqual([]);
    await stub.reserve({ id: "b", windows, usd: 0.6, tokens: 0, now: t0 + 2, ttlMs: 60_000 });
    expect(await stub.settle({ id: "b", windows, usd: 0.3, tokens: 0, now: t0 + 3 })).toMatchObject(
      [{ period: "day", unit: "usd", limit: 1 }],
    );
    await stub.reserve({ id: "c", windows, usd: 0.1, tokens: 0, now: t0 + 4, ttlMs: 60_000 });
    expect(await stub.settle({ id: "c", windows, usd: 0.1, tokens: 0, now: t0 + 5 })).toEqual([]);
    const [state] = await stub.state({ windows, now: t0 + 6 });
    expect(state).toMatchObject({ reservedUsd: 0 });
    expect(state!.spentUsd).toBeCloseTo(0.7, 9);
  });
});
