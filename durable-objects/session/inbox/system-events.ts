import type { QueuedSystemEvent } from "../meta.ts";
import type { SessionStore } from "../storage.ts";

/**
 * System events (edits, deletes, reactions, joins/leaves, renames, pins, button clicks) that passed
 * access control. They never start a run: each one waits here as one `System: …` line until the
 * session's next run takes them all into its prompt (OpenClaw's queued system events). The queue
 * is bounded (`messages.systemEvents.maxQueued`, oldest dropped first) and a line equal to the one
 * before it is not queued twice, so a burst of identical events cannot crowd out the prompt.
 */
const KEY = "systemEvents";

export function queueSystemEvent(
  store: SessionStore,
  event: QueuedSystemEvent,
  maxQueued: number,
): void {
  if (maxQueued <= 0) return;
  const queued = store.meta.getJson(KEY) ?? [];
  if (queued.at(-1)?.text === event.text) return;
  store.meta.setJson(KEY, [...queued, event].slice(-maxQueued));
}

/** Removes and returns every queued event, oldest first; call inside the transaction that starts the run. */
export function takeSystemEvents(store: SessionStore): QueuedSystemEvent[] {
  const queued = store.meta.getJson(KEY) ?? [];
  if (queued.length) store.meta.delete(KEY);
  return queued;
}
