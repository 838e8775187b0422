import { describeError, type SessionState } from "./state.ts";

/** A transient failure (Postgres down) parks the pump until `retryAt`; the alarm brings it back. */
export function retryPending(s: SessionState): boolean {
  const retryAt = Number(s.store.getMeta("retryAt") ?? 0);
  return retryAt > Date.now();
}

export function scheduleRetry(s: SessionState, what: string, error: unknown): void {
  const failures = Number(s.store.getMeta("retryFailures") ?? 0) + 1;
  const delay = Math.min(60_000, 1_000 * 2 ** Math.min(failures - 1, 6));
  s.store.setMeta("retryFailures", String(failures));
  s.store.setMeta("retryAt", String(Date.now() + delay));
  console.error(`${what} failed (attempt ${failures}, retrying in ${delay} ms): ${describeError(error)}`);
}

export function clearRetry(s: SessionState): void {
  if (s.store.getMeta("retryAt") === undefined) return;
  s.store.deleteMeta("retryAt");
  s.store.deleteMeta("retryFailures");
}
