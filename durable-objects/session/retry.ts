import { isPostgresUnavailable } from "../../functions/db/client.ts";
import { describeError, type SessionState } from "./state.ts";

/** A transient failure (Postgres down) parks the pump until `retryAt`; the alarm brings it back. */
export function retryPending(s: SessionState): boolean {
  const retryAt = Number(s.store.getMeta("retryAt") ?? 0);
  return retryAt > Date.now();
}

export function scheduleRetry(s: SessionState, what: string, error: unknown): void {
  const failures = Number(s.store.getMeta("retryFailures") ?? 0) + 1;
  // Postgres down: come back when the isolate's breaker lets the next attempt through. The outage
  // was logged once there; a line per waiting session would turn one outage into thousands.
  const outage = isPostgresUnavailable(error);
  const delay = outage
    ? Math.min(60_000, Math.max(1_000, error.retryAt - Date.now()))
    : Math.min(60_000, 1_000 * 2 ** Math.min(failures - 1, 6));
  s.store.setMeta("retryFailures", String(failures));
  s.store.setMeta("retryAt", String(Date.now() + delay));
  if (!outage) console.error(`${what} failed (attempt ${failures}, retrying in ${delay} ms): ${describeError(error)}`);
}

export function clearRetry(s: SessionState): void {
  if (s.store.getMeta("retryAt") === undefined) return;
  s.store.deleteMeta("retryAt");
  s.store.deleteMeta("retryFailures");
}
