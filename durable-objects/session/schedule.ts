import { mirrorDueAt } from "./mirror/mirror.ts";
import { nextPruneAt, retentionPolicy } from "./upkeep/retention.ts";
import { settings } from "./settings.ts";
import { metricsFlushDueAt } from "./upkeep/metrics.ts";
import { queueReadyAt } from "./run/setup.ts";
import { pendingCaptureDueAt } from "./run/session-memory.ts";
import { ExecStore } from "./exec-store.ts";
import type { SessionState } from "./state.ts";
import { announceDueAt } from "./subagents/announce.ts";
import { waitExpiresAt } from "./responses/client-tools.ts";

/**
 * How long a pass in progress may go without re-arming the alarm: if its isolate dies, the alarm
 * fires this long after and the next pass resumes from storage.
 */
export const WATCHDOG_MS = 30_000;

/**
 * THE one place that decides when this object must wake next, from what storage holds — the
 * earliest of: a new event (now), queued events (when their debounce ends), a run to resume, an
 * outbox retry, a mirror batch, the transient-failure park (`retryAt`), the retention sweep.
 * Whenever work is ready the answer is "now"; nothing stored can be left without a wake-up.
 * While a pass runs in this isolate, the work it will get to is covered by the watchdog instead
 * (the pass re-plans when it ends), so a busy object does not spin on its own alarm.
 */
export function nextAlarmAt(s: SessionState, now: number): number | undefined {
  const { store } = s;
  const due: number[] = [];
  const notBefore = s.pumping ? now + WATCHDOG_MS : now;
  // A transient failure parks triage and runs (not the outbox or the mirror) until retryAt.
  const parked = Math.max(notBefore, Number(store.meta.get("retryAt") ?? 0));
  if (store.inbox.count("new") > 0) due.push(parked);
  if (store.runs.active()) {
    due.push(parked);
  } else {
    const queued = store.inbox.byState("queued");
    if (queued.length) due.push(Math.max(parked, queueReadyAt(queued, s.config, settings(s))));
  }
  const outboxAt = store.outbox.nextAt();
  if (outboxAt !== undefined) due.push(outboxAt);
  // A session the user ended with /new or /reset still has its last messages to save to memory/.
  const captureAt = pendingCaptureDueAt(s);
  if (captureAt !== undefined) due.push(Math.max(notBefore, captureAt));
  const mirrorAt = mirrorDueAt(s, now);
  if (mirrorAt !== undefined) due.push(Math.max(notBefore, mirrorAt));
  // A background command in the sandbox: polled until its end is recorded (exec-background.ts).
  const execAt = new ExecStore(s.ctx.storage.sql).nextPollAt();
  if (execAt !== undefined) due.push(Math.max(notBefore, execAt));
  // A sub-agent's report its parent has not stored yet (subagents/announce.ts).
  const announceAt = announceDueAt(s);
  if (announceAt !== undefined) due.push(Math.max(notBefore, announceAt));
  // A run waiting for a caller's function call outputs ends when its wait does (client-tools.ts).
  const waitAt = waitExpiresAt(s);
  if (waitAt !== undefined) due.push(Math.max(notBefore, waitAt));
  const metricsAt = metricsFlushDueAt(s, now);
  if (metricsAt !== undefined) due.push(Math.max(notBefore, metricsAt));
  // An idle session wakes when something it keeps expires (a tombstone, a dead letter, …), to
  // clean up — not hourly.
  const pruneAt = nextPruneAt(s.store, retentionPolicy(s), now);
  if (pruneAt !== undefined) due.push(pruneAt);
  return due.length ? Math.max(now, Math.min(...due)) : undefined;
}

/** Sets the object's one alarm from nextAlarmAt. Every path that changes storage ends here. */
export async function scheduleAlarm(s: SessionState): Promise<void> {
  const at = nextAlarmAt(s, Date.now());
  if (at === undefined) await s.ctx.storage.deleteAlarm();
  else await s.ctx.storage.setAlarm(at);
}
