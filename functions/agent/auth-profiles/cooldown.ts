import type { ModelErrorKind } from "../types.ts";

/**
 * The cooldown rules of one auth profile (OpenClaw's concepts/model-failover, "cooldowns" and
 * "billing disable"), as pure functions of its stored usage: the state Durable Object applies them
 * (durable-objects/auth-profiles.ts), so every session sees the same cooldown.
 *
 * - A rate limit or an auth error cools the profile by its recent error count: 30 s, 1 min, then
 *   5 min (the cap). A provider's Retry-After longer than that step is honoured instead.
 * - A billing failure (out of credits) disables the profile for longer: 5 h, doubling with each
 *   further one, at most 24 h (OpenClaw names no figures; these are edgeclaw's).
 * - The error count starts again once a day has passed since the last failure (the failure window).
 * - A success clears the count, the cooldown and the disable window.
 */

export const COOLDOWN_STEPS_MS = [30_000, 60_000, 300_000] as const;
export const BILLING_DISABLE_BASE_MS = 5 * 3_600_000;
export const BILLING_DISABLE_MAX_MS = 24 * 3_600_000;
export const FAILURE_WINDOW_MS = 24 * 3_600_000;

/** The failures that are the key's own (typed by providers/errors.ts) and so move to the next profile. */
export type ProfileFailureReason = "rate_limit" | "auth" | "billing";

export function isProfileFailure(kind: ModelErrorKind): kind is ProfileFailureReason {
  return kind === "rate_limit" || kind === "auth" || kind === "billing";
}

/** What the gateway remembers of one profile: names and times only, never key material. */
export interface ProfileUsage {
  provider: string;
  lastUsed?: number;
  /** The last call this profile answered. */
  lastGood?: number;
  lastFailureAt?: number;
  /** Failures within the failure window. */
  errorCount: number;
  cooldownUntil?: number;
  cooldownReason?: ProfileFailureReason;
  disabledUntil?: number;
  disabledReason?: "billing";
  updatedAt: number;
}

export type ProfileOutcome =
  | { ok: true }
  | { ok: false; reason: ProfileFailureReason; retryAfterMs?: number };

export function applyOutcome(
  previous: ProfileUsage | undefined,
  provider: string,
  outcome: ProfileOutcome,
  now: number,
): ProfileUsage {
  const base: ProfileUsage = { ...(previous ?? { errorCount: 0 }), provider, updatedAt: now };
  base.lastUsed = now;
  if (outcome.ok)
    return {
      provider,
      lastUsed: now,
      lastGood: now,
      errorCount: 0,
      updatedAt: now,
      ...(previous?.lastFailureAt !== undefined ? { lastFailureAt: previous.lastFailureAt } : {}),
    };
  const inWindow =
    previous?.lastFailureAt !== undefined && now - previous.lastFailureAt < FAILURE_WINDOW_MS;
  const errorCount = inWindow ? previous.errorCount + 1 : 1;
  const next: ProfileUsage = { ...base, errorCount, lastFailureAt: now };
  if (outcome.reason === "billing") {
    const disableMs = Math.min(
      BILLING_DISABLE_MAX_MS,
      BILLING_DISABLE_BASE_MS * 2 ** (errorCount - 1),
    );
    next.disabledUntil = now + disableMs;
    next.disabledReason = "billing";
    return next;
  }
  const step = COOLDOWN_STEPS_MS[Math.min(errorCount, COOLDOWN_STEPS_MS.length) - 1]!;
  const wait = Math.min(BILLING_DISABLE_MAX_MS, Math.max(step, outcome.retryAfterMs ?? 0));
  next.cooldownUntil = now + wait;
  next.cooldownReason = outcome.reason;
  return next;
}

/** Until when the profile may not be used, and why; undefined when it may be used now. */
export function unavailable(
  usage: ProfileUsage | undefined,
  now: number,
): { until: number; reason: ProfileFailureReason } | undefined {
  if (!usage) return undefined;
  const disabled =
    usage.disabledUntil !== undefined && usage.disabledUntil > now
      ? { until: usage.disabledUntil, reason: "billing" as const }
      : undefined;
  const cooling =
    usage.cooldownUntil !== undefined && usage.cooldownUntil > now
      ? { until: usage.cooldownUntil, reason: usage.cooldownReason ?? "rate_limit" }
      : undefined;
  if (disabled && cooling) return disabled.until >= cooling.until ? disabled : cooling;
  return disabled ?? cooling;
}
