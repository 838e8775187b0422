import { describe, expect, it } from "vitest";
import {
  applyOutcome,
  BILLING_DISABLE_BASE_MS,
  BILLING_DISABLE_MAX_MS,
  FAILURE_WINDOW_MS,
  unavailable,
  type ProfileUsage,
} from "../../functions/agent/auth-profiles/cooldown.ts";
import {
  planProfiles,
  providerAuthProfiles,
} from "../../functions/agent/auth-profiles/profiles.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { MAX_AUTH_PROFILES } from "../../durable-objects/auth-profiles.ts";
import { testEnv } from "./model-helpers.ts";

/**
 * The cooldown rules and the try order of auth profiles (functions/agent/auth-profiles/), and the
 * state object's bound, without a model call (the calls are in auth-profiles.test.ts).
 */
const T0 = 1_800_000_000_000;
const rateLimit = { ok: false, reason: "rate_limit" } as const;

function replay(outcomes: Array<[at: number, outcome: Parameters<typeof applyOutcome>[2]]>) {
  let usage: ProfileUsage | undefined;
  for (const [at, outcome] of outcomes) usage = applyOutcome(usage, "p", outcome, at);
  return usage!;
}

describe("auth profile cooldowns", () => {
  it("grow 30 s, 1 min, 5 min and stay at 5 min; a success clears them", () => {
    const steps = [0, 1, 2, 3].map((i) => {
      const at = T0 + i * 1000;
      const usage = replay(
        Array.from(
          { length: i + 1 },
          (_, k) => [T0 + k * 1000, rateLimit] as [number, typeof rateLimit],
        ),
      );
      return usage.cooldownUntil! - at;
    });
    expect(steps).toEqual([30_000, 60_000, 300_000, 300_000]);
    const healed = replay([
      [T0, rateLimit],
      [T0 + 1, { ok: true }],
    ]);
    expect(healed).toMatchObject({ errorCount: 0, lastGood: T0 + 1 });
    expect(healed.cooldownUntil).toBeUndefined();
    expect(unavailable(healed, T0 + 2)).toBeUndefined();
  });

  it("honours a longer Retry-After, and counts again from one once the failure window passed", () => {
    const waited = applyOutcome(undefined, "p", { ...rateLimit, retryAfterMs: 90_000 }, T0);
    expect(waited.cooldownUntil).toBe(T0 + 90_000);
    const later = T0 + FAILURE_WINDOW_MS + 1;
    const fresh = replay([
      [T0, rateLimit],
      [T0 + 1, rateLimit],
      [later, { ok: false, reason: "auth" }],
    ]);
    expect(fresh).toMatchObject({ errorCount: 1, cooldownReason: "auth" });
    expect(fresh.cooldownUntil).toBe(later + 30_000);
  });

  it("a billing failure disables for 5 h, doubling, at most 24 h; the disable outlasts a cooldown", () => {
    const billing = { ok: false, reason: "billing" } as const;
    const windows = [1, 2, 3, 4].map((n) => {
      const outcomes = Array.from(
        { length: n },
        (_, k) => [T0 + k, billing] as [number, typeof billing],
      );
      return replay(outcomes).disabledUntil! - (T0 + n - 1);
    });
    expect(windows).toEqual([
      BILLING_DISABLE_BASE_MS,
      2 * BILLING_DISABLE_BASE_MS,
      4 * BILLING_DISABLE_BASE_MS,
      BILLING_DISABLE_MAX_MS,
    ]);
    const both = replay([
      [T0, billing],
      [T0 + 1, rateLimit],
    ]);
    expect(unavailable(both, T0 + 60_000)).toEqual({
      until: T0 + BILLING_DISABLE_BASE_MS,
      reason: "billing",
    });
  });
});

describe("auth profile order", () => {
  const config = (order?: string[]) =>
    parseConfig({
      auth: {
        profiles: {
          "openai:a": {},
          "openai:b": {},
          "openai:c": {},
          "openai:web": { mode: "oauth" },
        },
        ...(order ? { order: { openai: order } } : {}),
      },
    });
  const used = (lastUsed: number): ProfileUsage => ({
    provider: "openai",
    errorCount: 0,
    lastUsed,
    updatedAt: lastUsed,
  });

  it("without auth.order: least recently used first, ties in config order; oauth profiles are left out", () => {
    const c = config();
    const profiles = providerAuthProfiles(c, "openai");
    expect(profiles.map((p) => [p.id, p.secretName])).toEqual([
      ["openai:a", "OPENAI_API_KEY_A"],
      ["openai:b", "OPENAI_API_KEY_B"],
      ["openai:c", "OPENAI_API_KEY_C"],
    ]);
    const plan = planProfiles(
      c,
      profiles,
      { "openai:a": used(T0 + 2), "openai:c": used(T0 + 1) },
      T0 + 3,
    );
    expect(plan.usable.map((p) => p.id)).toEqual(["openai:b", "openai:c", "openai:a"]);
  });

  it("auth.order decides and leaves out what it omits; cooling profiles are skipped, soonest first; a usable pin goes first", () => {
    const c = config(["openai:c", "openai:a"]);
    const profiles = providerAuthProfiles(c, "openai");
    const cooling = applyOutcome(undefined, "openai", rateLimit, T0);
    expect(planProfiles(c, profiles, {}, T0).usable.map((p) => p.id)).toEqual([
      "openai:c",
      "openai:a",
    ]);
    const plan = planProfiles(c, profiles, { "openai:c": cooling }, T0 + 1);
    expect(plan.usable.map((p) => p.id)).toEqual(["openai:a"]);
    expect(plan.blocked).toEqual([
      {
        profile: expect.objectContaining({ id: "openai:c" }),
        until: T0 + 30_000,
        reason: "rate_limit",
      },
    ]);
    expect(
      planProfiles(c, profiles, {}, T0, { sticky: "openai:a" }).usable.map((p) => p.id),
    ).toEqual(["openai:a", "openai:c"]);
    // A /model …@profile pin goes first, even when auth.order leaves it out; a cooling one waits.
    expect(
      planProfiles(c, profiles, {}, T0, { user: "openai:b", sticky: "openai:a" }).usable.map(
        (p) => p.id,
      ),
    ).toEqual(["openai:b", "openai:a", "openai:c"]);
    const pinnedCooling = { "openai:b": applyOutcome(undefined, "openai", rateLimit, T0) };
    expect(
      planProfiles(c, profiles, pinnedCooling, T0 + 1, { user: "openai:b" }).usable.map(
        (p) => p.id,
      ),
    ).toEqual(["openai:c", "openai:a"]);
  });
});

describe("AuthProfileStateDO", () => {
  it("keeps at most MAX_AUTH_PROFILES profiles, dropping the least recently updated", async () => {
    // An object of its own: the gateway's is named "global".
    const stub = testEnv.AUTH_PROFILES.get(
      testEnv.AUTH_PROFILES.idFromName(`bound-${crypto.randomUUID()}`),
    );
    for (let i = 0; i < MAX_AUTH_PROFILES + 3; i++)
      await stub.record(`p:n${i}`, "p", { ok: false, reason: "rate_limit" });
    const kept = Object.keys(await stub.list());
    expect(kept).toHaveLength(MAX_AUTH_PROFILES);
    expect(kept).not.toContain("p:n0");
    expect(kept).toContain(`p:n${MAX_AUTH_PROFILES + 2}`);
  });
});
