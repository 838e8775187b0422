import { describe, expect, it } from "vitest";
import { periodWindow } from "../../functions/agent/budget-periods.ts";
import { scopesFor, windowsFor } from "../../functions/agent/budget-scopes.ts";
import { worstCase } from "../../functions/agent/metering.ts";
import { budgetsSchema } from "../../functions/config/budgets.ts";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import { suiteConfig, testEnv } from "./model-helpers.ts";

/** Period keys and boundaries come from an injected `now`, in the configured zone. */
describe("budget periods", () => {
  it("a UTC day and month: key and the next midnight", () => {
    const now = Date.UTC(2026, 10, 30, 23, 59, 59);
    expect(periodWindow("day", now, "UTC")).toEqual({
      period: "day",
      key: "day:2026-11-30",
      resetsAt: Date.UTC(2026, 11, 1),
    });
    expect(periodWindow("month", now, "UTC")).toEqual({
      period: "month",
      key: "month:2026-11",
      resetsAt: Date.UTC(2026, 11, 1),
    });
    expect(periodWindow("day", now + 1000, "UTC").key).toBe("day:2026-12-01");
    expect(periodWindow("month", Date.UTC(2026, 11, 31, 12), "UTC")).toMatchObject({
      key: "month:2026-12",
      resetsAt: Date.UTC(2027, 0, 1),
    });
  });

  it("in a configured zone the day turns at local midnight, across a DST change", () => {
    // 2026-11-30 23:30 in Tokyo (UTC+9) is 14:30 UTC: still the 30th there, the 1st in 30 minutes.
    const tokyo = periodWindow("day", Date.UTC(2026, 10, 30, 14, 30), "Asia/Tokyo");
    expect(tokyo).toEqual({
      period: "day",
      key: "day:2026-11-30",
      resetsAt: Date.UTC(2026, 10, 30, 15, 0),
    });
    // New York leaves DST on 2026-11-01: that day is 25 hours long, and the next midnight is 05:00 UTC.
    const newYork = periodWindow("day", Date.UTC(2026, 10, 1, 12), "America/New_York");
    expect(newYork).toEqual({
      period: "day",
      key: "day:2026-11-01",
      resetsAt: Date.UTC(2026, 10, 2, 5, 0),
    });
    // The month of March 2026 in New York ends at 04:00 UTC on April 1 (DST began on March 8).
    expect(periodWindow("month", Date.UTC(2026, 2, 15), "America/New_York")).toMatchObject({
      key: "month:2026-03",
      resetsAt: Date.UTC(2026, 3, 1, 4, 0),
    });
  });

  it("only scopes with a cap are checked; agents.<id> replaces agent for that agent", () => {
    const budgets = budgetsSchema.parse({
      agent: { day: { usd: 5 } },
      agents: { vip: { month: { tokens: 1000 } } },
      sender: { day: { tokens: 10 } },
    });
    const now = Date.UTC(2026, 10, 30);
    expect(
      scopesFor(budgets, { agentId: "main", sessionKey: "k" }, now).map((scope) => scope.scope),
    ).toEqual(["agent:main"]);
    const vip = scopesFor(budgets, { agentId: "vip", sessionKey: "k", sender: "slack:U1" }, now);
    expect(vip.map((scope) => [scope.scope, scope.windows.map((w) => w.key)])).toEqual([
      ["agent:vip", ["month:2026-11"]],
      ["sender:slack:U1", ["day:2026-11-30"]],
    ]);
    expect(windowsFor(undefined, budgets, now)).toEqual([]);
  });

  it("a call's worst case prices the prompt's bytes at the dearest input rate plus maxTokens of output, from config", () => {
    const model = resolveModel(suiteConfig, testEnv, "fakeanthropic/claude-test");
    const request = {
      system: "sys",
      messages: [{ role: "user" as const, content: "héllo" }],
      tools: [],
      maxTokens: 1000,
    };
    const bytes = new TextEncoder().encode(`sys${JSON.stringify(request.messages)}[]`).length;
    // input 3, cacheRead 0.3, cacheWrite 3.75 → 3.75 per million input; output 15 per million.
    expect(worstCase(model, request)).toEqual({
      tokens: bytes + 1000,
      usd: (bytes * 3.75 + 1000 * 15) / 1_000_000,
    });
  });
});
