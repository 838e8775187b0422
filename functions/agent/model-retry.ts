import { RETRYABLE_MODEL_ERRORS, type ModelErrorKind } from "./types.ts";

/**
 * Which failures are worth another try, and how long to wait. Per concepts/retry: 3 attempts,
 * delays capped at 30 s with 10 % jitter; a provider's Retry-After is honoured up to 60 s, and a
 * longer one ends the retries at once so failover can run (OpenClaw's `x-should-retry: false`).
 */

export const MODEL_RETRY_ATTEMPTS = 3;
export const MODEL_RETRY_BASE_DELAY_MS = 1_000;
export const MODEL_RETRY_MAX_DELAY_MS = 30_000;
export const MODEL_RETRY_JITTER = 0.1;
export const MODEL_RETRY_AFTER_CAP_MS = 60_000;

/** Failures that move to the next model in the fallback chain (after retries, where retryable). */
const FAILOVER: ReadonlySet<ModelErrorKind> = new Set([
  "rate_limit",
  "overloaded",
  "server",
  "timeout",
  "network",
  "auth",
  "billing",
  "not_configured",
]);

export function isRetryable(kind: ModelErrorKind): boolean {
  return RETRYABLE_MODEL_ERRORS.has(kind);
}

/** bad_request and context_overflow would fail the same way on any model; aborts are the caller's. */
export function isFailoverWorthy(kind: ModelErrorKind): boolean {
  return FAILOVER.has(kind);
}

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1), or `undefined` when the provider asked
 * for a wait longer than the cap and the call should fail over instead of sleeping.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
): number | undefined {
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > MODEL_RETRY_AFTER_CAP_MS) return undefined;
    return Math.ceil(retryAfterMs);
  }
  const exponential = Math.min(
    MODEL_RETRY_MAX_DELAY_MS,
    MODEL_RETRY_BASE_DELAY_MS * 2 ** (attempt - 1),
  );
  const jitter = 1 + MODEL_RETRY_JITTER * (random() * 2 - 1);
  return Math.round(Math.min(MODEL_RETRY_MAX_DELAY_MS, exponential * jitter));
}
