import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { endCooldown, keyError, keysUsed, rig, usageOf } from "./auth-profile-helpers.ts";
import { newScenario, recorded } from "./model-helpers.ts";

/**
 * Auth profiles end to end (#24 item 5): sessions under a config with two API-key profiles of one
 * provider on the fake model server, which answers 429, 401 or 402 to a given key whatever the
 * request (auth-profile-helpers.ts). Each test names a provider of its own, so its profiles' state
 * in the gateway's AuthProfileStateDO is its own; time is driven by rewriting that state. Every
 * console line the Worker writes during a test is captured: none may carry a key.
 */

const logged: string[] = [];
beforeEach(() => {
  logged.length = 0;
  for (const level of ["log", "info", "warn", "error", "debug"] as const)
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(
        args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" "),
      );
    });
});
afterEach(() => vi.restoreAllMocks());

describe("auth profiles: rotation with cooldowns", () => {
  it("a 429 on the first profile is answered by the second; the first cools down, is skipped, then used again", async () => {
    const r = rig();
    await keyError(r.keys.first, { type: "error", status: 429, errorType: "rate_limit_error" });
    const scenario = newScenario("rotate-429");
    const say = await r.session("rotate-429");
    expect(await say(`hello [scenario:${scenario}]`)).toContain("You said: hello");
    expect(keysUsed(await recorded(scenario))).toEqual([r.keys.first, r.keys.second]);

    const cooled = await usageOf(r.first);
    expect(cooled).toMatchObject({ errorCount: 1, cooldownReason: "rate_limit" });
    const left = cooled!.cooldownUntil! - Date.now();
    expect(left).toBeGreaterThan(20_000);
    expect(left).toBeLessThanOrEqual(30_000);
    expect(await usageOf(r.second)).toMatchObject({ errorCount: 0 });
    expect((await usageOf(r.second))!.lastGood).toBeGreaterThan(0);

    // A new session (no sticky profile) skips the cooling first profile: one request, second key.
    const next = newScenario("rotate-skip");
    const other = await r.session("rotate-skip");
    expect(await other(`again [scenario:${next}]`)).toContain("You said: again");
    expect(keysUsed(await recorded(next))).toEqual([r.keys.second]);

    // Its cooldown over (and the key healthy again), the order's first profile answers once more.
    await keyError(r.keys.first, null);
    await endCooldown(r.first);
    const later = newScenario("rotate-back");
    const third = await r.session("rotate-back");
    expect(await third(`later [scenario:${later}]`)).toContain("You said: later");
    expect(keysUsed(await recorded(later))).toEqual([r.keys.first]);
    expect(await usageOf(r.first)).toMatchObject({ errorCount: 0 });

    // Nothing logged or answered carries a key; the failure was logged by name.
    expect(logged.some((line) => line.includes('"event":"auth_profile_failure"'))).toBe(true);
    expect(logged.some((line) => line.includes(r.first))).toBe(true);
    for (const line of logged) {
      expect(line).not.toContain(r.keys.first);
      expect(line).not.toContain(r.keys.second);
    }
  });

  it("the session sticks to the profile that answered while it is usable", async () => {
    const r = rig();
    await keyError(r.keys.first, { type: "error", status: 429, errorType: "rate_limit_error" });
    const say = await r.session("sticky");
    const one = newScenario("sticky-1");
    await say(`one [scenario:${one}]`);
    await keyError(r.keys.first, null);
    await endCooldown(r.first);
    // The first profile is usable again and first in auth.order, but this session stays on its own.
    const two = newScenario("sticky-2");
    expect(await say(`two [scenario:${two}]`)).toContain("You said: two");
    expect(keysUsed(await recorded(two))).toEqual([r.keys.second]);
  });

  it("/model <model>@<profile> puts that profile first for the session; an unknown one is refused", async () => {
    const r = rig();
    const say = await r.session("user-pin");
    expect(await say(`/model ${r.provider}/claude-test@${r.provider}:nobody`)).toContain(
      `No API-key auth profile "${r.provider}:nobody" for ${r.provider}: its profiles are ${r.first}, ${r.second}`,
    );
    expect(await say(`/model ${r.provider}/claude-test@${r.second}`)).toContain(
      `with auth profile ${r.second} first`,
    );
    const one = newScenario("user-pin");
    expect(await say(`pinned? [scenario:${one}]`)).toContain("You said: pinned?");
    expect(keysUsed(await recorded(one))).toEqual([r.keys.second]);
    expect(await say("/status")).toContain(`pinned: ${r.second}`);
    // Kept by a pick of the same provider, cleared by one of another provider and by /model default.
    await say(`/model ${r.provider}/claude-test`);
    expect(await say("/status")).toContain(`pinned: ${r.second}`);
    await say("/model fakeanthropic/claude-test");
    await say(`/model ${r.provider}/claude-test`);
    expect(await say("/status")).not.toContain("pinned:");
    await say(`/model ${r.provider}/claude-test@${r.second}`);
    expect(await say("/model default")).toContain("Model reset");
    expect(await say("/status")).not.toContain("pinned:");
  });

  it("a 401 cools the profile down by the error count (30 s, then 1 min); a 402 disables it for hours", async () => {
    const r = rig();
    await keyError(r.keys.first, { type: "error", status: 401, errorType: "authentication_error" });
    const say = await r.session("auth-401");
    const one = newScenario("auth-401");
    expect(await say(`first [scenario:${one}]`)).toContain("You said: first");
    expect(keysUsed(await recorded(one))).toEqual([r.keys.first, r.keys.second]);
    const after = await usageOf(r.first);
    expect(after).toMatchObject({ errorCount: 1, cooldownReason: "auth" });
    expect(after!.cooldownUntil! - Date.now()).toBeGreaterThan(20_000);

    await endCooldown(r.first);
    const say2 = await r.session("auth-401-again");
    const two = newScenario("auth-401-again");
    await say2(`second [scenario:${two}]`);
    expect(keysUsed(await recorded(two))).toEqual([r.keys.first, r.keys.second]);
    const again = await usageOf(r.first);
    expect(again).toMatchObject({ errorCount: 2, cooldownReason: "auth" });
    expect(again!.cooldownUntil! - Date.now()).toBeGreaterThan(50_000);
    expect(again!.cooldownUntil! - Date.now()).toBeLessThanOrEqual(60_000);

    await keyError(r.keys.second, {
      type: "error",
      status: 402,
      message: "Your credit balance is too low",
    });
    await endCooldown(r.first);
    await keyError(r.keys.first, null);
    const say3 = await r.session("billing-402");
    const three = newScenario("billing-402");
    // The order's first profile answers now; the second is only tried when it fails.
    await keyError(r.keys.first, { type: "error", status: 429, errorType: "rate_limit_error" });
    await say3(`third [scenario:${three}]`);
    const billed = await usageOf(r.second);
    expect(billed).toMatchObject({ disabledReason: "billing" });
    expect(billed!.disabledUntil! - Date.now()).toBeGreaterThan(4.9 * 3_600_000);
    for (const key of [r.keys.first, r.keys.second]) await keyError(key, null);
  });

  it("every profile cooling: one error reply naming them, and no request until one is usable", async () => {
    const r = rig();
    for (const key of [r.keys.first, r.keys.second])
      await keyError(key, { type: "error", status: 429, errorType: "rate_limit_error" });
    const say = await r.session("all-cooling");
    const one = newScenario("all-cooling");
    const reply = await say(`anyone? [scenario:${one}]`);
    expect(reply).toContain("rate_limit");
    expect(reply.match(/⚠️/g)).toHaveLength(1);
    // One rotation on a rate limit, then no retry of a cooled key: two requests in all.
    expect(keysUsed(await recorded(one))).toEqual([r.keys.first, r.keys.second]);

    const two = newScenario("all-cooling-2");
    const second = await say(`still? [scenario:${two}]`);
    expect(second).toContain(`every auth profile of "${r.provider}" is unavailable`);
    expect(second).toContain(`${r.first} cooling down (rate_limit)`);
    expect(second).toContain("usable again in");
    expect(second.match(/⚠️/g)).toHaveLength(1);
    expect(await recorded(two)).toHaveLength(0);
    for (const key of [r.keys.first, r.keys.second]) await keyError(key, null);
  });

  it("every profile cooling with a fallback model: the fallback answers", async () => {
    const r = rig({ fallbacks: ["fakeanthropic/claude-test"] });
    for (const key of [r.keys.first, r.keys.second])
      await keyError(key, { type: "error", status: 429, errorType: "rate_limit_error" });
    const say = await r.session("fallback");
    const one = newScenario("fallback");
    const reply = await say(`help [scenario:${one}]`);
    expect(reply).toContain("Model Fallback: fakeanthropic/claude-test");
    expect(reply).toContain("You said: help");
    expect(keysUsed(await recorded(one))).toEqual([
      r.keys.first,
      r.keys.second,
      "test-anthropic-key",
    ]);
    for (const key of [r.keys.first, r.keys.second]) await keyError(key, null);
  });

  it("/status names the profile in use and the cooling one, never a key", async () => {
    const r = rig();
    await keyError(r.keys.first, { type: "error", status: 429, errorType: "rate_limit_error" });
    const say = await r.session("status");
    await say(`hi [scenario:${newScenario("status")}]`);
    const status = await say("/status");
    expect(status).toMatch(
      new RegExp(
        `🔑 Auth \\(${r.provider}\\): ${r.second} in use · ${r.first} cooling down \\d+s \\(rate_limit\\)`,
      ),
    );
    expect(status).not.toContain(r.keys.first);
    expect(status).not.toContain(r.keys.second);
    await keyError(r.keys.first, null);
  });
});
