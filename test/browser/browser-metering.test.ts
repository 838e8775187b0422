import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../durable-objects/session-api.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  webchatEvent,
} from "../durable-objects/helpers.ts";
import { configWith, sessionWithConfig, storedCalls } from "../durable-objects/budget-helpers.ts";
import { newScenario } from "../agent/model-helpers.ts";
import { orderForm, requestsTo, servePages, uniquePrefix } from "./pages.ts";

/**
 * Browser time metered and under the budgets (functions/agent/browser-meter.ts): each browser call
 * is a call of kind "browser" in model_calls — its billed browser time as the duration, priced at
 * Browser Run's $0.09 per hour — shown by /usage cost; a budget with no room for a call's worst
 * case refuses it before the browser Worker is asked, so no browser opens and no page is fetched.
 */

const call = (id: string, args: Record<string, unknown>) => ({
  type: "tool_calls",
  calls: [{ id, name: "browser", arguments: args }],
});

function doneText(events: RunEvent[]): string {
  const done = events.find((e) => e.type === "done") as { text: string } | undefined;
  return done?.text ?? JSON.stringify(events.at(-1));
}

/** The suite's browser block (its loopback allowance) with `extra` on top. */
function browserWith(extra: Record<string, unknown>): Record<string, unknown> {
  const base = JSON.parse(configWith({})) as { browser?: Record<string, unknown> };
  return { ...base.browser, ...extra };
}

describe("browser time is metered", () => {
  it("each call is recorded as kind browser with its billed time and price, and /usage cost shows the seconds", async () => {
    const prefix = uniquePrefix("metered");
    const base = await servePages([{ path: `${prefix}/order`, body: orderForm(`${prefix}/done`) }]);
    const scenario = newScenario("browser-metered");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/order` }),
      call("call_stop", { action: "stop" }),
      { type: "text", text: "Looked." },
    ]);
    const key = `agent:main:webchat:browser-metered-${crypto.randomUUID().slice(0, 8)}`;
    const stub = await sessionWithConfig(key, configWith({}));
    const say = async (text: string) =>
      doneText(await collectRunEvents(await stub.chat(webchatEvent(key, text))));
    expect(await say(`look [scenario:${scenario}]`)).toBe("Looked.");

    const rows = (await storedCalls(key)).filter((row) => row.kind === "browser") as Array<
      Awaited<ReturnType<typeof storedCalls>>[number] & { id: string; duration_ms: number }
    >;
    expect(rows.map((row) => row.id).sort()).toEqual(["browser:call_nav", "browser:call_stop"]);
    for (const row of rows) {
      expect(row).toMatchObject({ provider: "cloudflare", model: "browser-run", input_tokens: 0 });
      expect(row.cost_usd).toBeCloseTo((row.duration_ms / 3_600_000) * 0.09, 12);
    }
    const billedMs = rows.reduce((sum, row) => sum + row.duration_ms, 0);
    // The browser was open from the navigate's launch until stop closed it.
    expect(billedMs).toBeGreaterThan(0);
    // What the model read at the end of each answer is what was metered.
    const shown = JSON.stringify((await modelRequests(scenario))[2]?.body.messages ?? []);
    const times = [...shown.matchAll(/browser time (\d+\.\d\d) s/g)].map((m) => Number(m[1]));
    expect(times).toHaveLength(2);
    expect(Math.abs(times[0]! + times[1]! - billedMs / 1000)).toBeLessThan(0.02);

    const cost = await say("/usage cost");
    expect(cost).toMatch(/browser 2 · \d+\.\d s · \$0\.0000\d+/);
  });

  it("a budget with no room for the browser's worst case refuses the action before a browser opens", async () => {
    const prefix = uniquePrefix("refused");
    const base = await servePages([{ path: `${prefix}/order`, body: orderForm(`${prefix}/done`) }]);
    const scenario = newScenario("browser-budget");
    await scriptModel(scenario, [
      call("call_nav", { action: "navigate", url: `${base}${prefix}/order` }),
      { type: "text", text: "Could not browse." },
    ]);
    const key = `agent:main:webchat:browser-budget-${crypto.randomUUID().slice(0, 8)}`;
    // A 100-hour idle close makes one call's worst case ~$18 of browser time: more than the $5 cap
    // leaves, while the model's own calls fit under it.
    const config = configWith({
      browser: browserWith({ tabCleanup: { idleMinutes: 6000 } }),
      budgets: { session: { day: { usd: 5 } } },
    });
    const stub = await sessionWithConfig(key, config);
    const events = await collectRunEvents(
      await stub.chat(webchatEvent(key, `browse [scenario:${scenario}]`)),
    );
    expect(doneText(events)).toBe("Could not browse.");
    const shown = JSON.stringify((await modelRequests(scenario))[1]?.body.messages ?? []);
    expect(shown).toContain(
      "browser navigate: refused before opening the browser — budget reached: session daily limit of $5.00",
    );
    expect(await requestsTo(`${prefix}/order`)).toHaveLength(0);
    expect((await storedCalls(key)).filter((row) => row.kind === "browser")).toHaveLength(0);
  });
});
