import { isPostgresUnavailable } from "../../functions/db/client.ts";
import { classifyError } from "../../functions/core/classify-error.ts";
import type { SessionState } from "./state.ts";
import { sessionLog } from "./log.ts";

/** A transient failure parks triage and runs until `retryAt`; the alarm brings them back. */
export function retryPending(s: SessionState): boolean {
  const retryAt = Number(s.store.meta.get("retryAt") ?? 0);
  return retryAt > Date.now();
}

export type FailureVerdict =
  /** Transient and under the bound: parked until retryAt, the events stay in order. */
  | { outcome: "retry"; reason: string }
  /** Permanent, or transient too often: the events are to be dead-lettered with this reason. */
  | { outcome: "dead"; reason: string };

/**
 * Records that a step working on `seqs` failed and decides what happens: a transient failure
 * backs off (1 s doubling, capped at messages.processing.maxBackoffMs) until the events have failed
 * messages.processing.maxAttempts times; a permanent one ends them now. Nothing else retries
 * forever, and one bad event never holds up the events behind it for longer than that. A Postgres
 * outage (the isolate's breaker refusing, or its probe failing) is the exception: it waits for the
 * breaker and counts no attempt.
 */
export function recordFailure(
  s: SessionState,
  what: string,
  seqs: number[],
  error: unknown,
): FailureVerdict {
  const { maxAttempts, maxBackoffMs } = s.config.messages.processing;
  const { class: errorClass, reason } = classifyError(error);
  if (isPostgresUnavailable(error)) {
    // A Postgres outage is not the event's fault, and the event is safe in this object's storage:
    // it waits as long as the outage lasts (one probe per backoff and isolate, breaker-paced) and
    // never counts toward maxAttempts, so no stored event is lost to an outage (DESIGN.md).
    const delay = Math.min(maxBackoffMs, Math.max(1_000, error.retryAt - Date.now()));
    s.store.meta.set("retryAt", String(Date.now() + delay));
    return { outcome: "retry", reason };
  }
  const log = sessionLog(s, { seqs });
  if (errorClass === "permanent") {
    log.error(`${what} failed permanently`, { reason, errorClass });
    return { outcome: "dead", reason };
  }
  const failures = s.store.inbox.addFailure(seqs);
  if (failures >= maxAttempts) {
    log.error(`${what} failed ${failures} times; giving up`, { reason, errorClass });
    return { outcome: "dead", reason: `gave up after ${failures} attempts: ${reason}` };
  }
  const delay = Math.min(maxBackoffMs, 1_000 * 2 ** Math.min(failures - 1, 20));
  s.store.meta.set("retryAt", String(Date.now() + delay));
  log.warn(`${what} failed; retrying`, {
    reason,
    errorClass,
    attempt: failures,
    maxAttempts,
    retryInMs: delay,
  });
  return { outcome: "retry", reason };
}

export function clearRetry(s: SessionState): void {
  if (s.store.meta.get("retryAt") === undefined) return;
  s.store.meta.delete("retryAt");
}
