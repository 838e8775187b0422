import { PRUNE_EVERY_MS } from "./delivery.ts";
import { settings } from "./identity.ts";
import { queuePolicy } from "./queue-policy.ts";
import { prepareRun } from "./run-setup.ts";
import { TOMBSTONE_MS } from "./storage.ts";
import type { SessionState } from "./state.ts";

/** Sets the object's one alarm to the earliest time something stored needs work. */
export async function scheduleAlarm(s: SessionState, mirrored: boolean): Promise<void> {
  const now = Date.now();
  const due: number[] = [];
  const outboxAt = s.store.nextOutboxAt();
  if (outboxAt !== undefined) due.push(outboxAt);
  const debounceAt = nextDebounceAt(s);
  if (debounceAt !== undefined) due.push(debounceAt);
  if (!mirrored) due.push(now + 5_000);
  const oldest = s.store.oldestSettledAt();
  // An idle session wakes once more, when its oldest tombstone expires, to clean up — not hourly.
  if (oldest !== undefined) due.push(Math.max(now + PRUNE_EVERY_MS, oldest + TOMBSTONE_MS));
  const retryAt = Number(s.store.getMeta("retryAt") ?? 0);
  if (retryAt) due.push(retryAt);
  else if (s.store.inboxByState("new").length) due.push(now);
  if (due.length) await s.ctx.storage.setAlarm(Math.max(now, Math.min(...due)));
  else await s.ctx.storage.deleteAlarm();
}

function nextDebounceAt(s: SessionState): number | undefined {
  const queued = s.store.inboxByState("queued");
  if (!queued.length) return undefined;
  const plan = prepareRun({ queued, config: s.config, settings: settings(s), now: Date.now() });
  const { debounceMs } = queuePolicy(s.config, settings(s), queued[0]!.event.envelope.channel);
  return plan ? undefined : Math.max(...queued.map((row) => row.receivedAt)) + debounceMs;
}
