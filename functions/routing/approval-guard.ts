import type { AccessStore } from "./access-store.ts";

/**
 * Brute-force guard for pairing approvals: a caller who sends `maxAttempts` wrong codes within
 * `windowMs` is locked out for `lockoutMs` (the `gateway.auth.rateLimit` numbers: 10 / 60 s ⇒ 5 min).
 * State lives in Postgres (failures in audit_events, the lockout in gateway_state) because Worker
 * isolates share no memory. Never loopback-exempt: behind a Worker "loopback" cannot be trusted.
 */
export interface RateLimit {
  maxAttempts: number;
  windowMs: number;
  lockoutMs: number;
}

export const FAILED_APPROVAL_EVENT = "pairing.approve.failed";
export const LOCKED_APPROVAL_EVENT = "pairing.approve.locked";
export const RATE_LIMITED_APPROVAL_EVENT = "pairing.approve.rate_limited";

const lockoutKey = (actor: string) => `pairing.approve.lockout:${actor}`;

export async function approvalLockout(
  store: AccessStore,
  actor: string,
  now: number,
): Promise<{ retryAfterMs: number } | undefined> {
  const value = await store.getState(lockoutKey(actor));
  const until =
    typeof value === "object" && value !== null && "until" in value
      ? Number((value as { until: unknown }).until)
      : 0;
  return until > now ? { retryAfterMs: until - now } : undefined;
}

/** Records one wrong code; returns the lockout if this failure triggered one. */
export async function recordFailedApproval(
  store: AccessStore,
  actor: string,
  now: number,
  limit: RateLimit,
  detail: Record<string, unknown>,
): Promise<{ retryAfterMs: number } | undefined> {
  await store.audit({ kind: FAILED_APPROVAL_EVENT, actor, detail, at: now });
  const failures = await store.countAuditEvents(FAILED_APPROVAL_EVENT, actor, now - limit.windowMs);
  if (failures < limit.maxAttempts) return undefined;
  await store.setState(lockoutKey(actor), { until: now + limit.lockoutMs }, now);
  await store.audit({
    kind: LOCKED_APPROVAL_EVENT,
    actor,
    detail: { failures, lockoutMs: limit.lockoutMs },
    at: now,
  });
  return { retryAfterMs: limit.lockoutMs };
}
