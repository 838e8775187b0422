import type { InboxRow } from "../storage.ts";
import { queuePolicy } from "./queue-policy.ts";
import type { TriageHost } from "./triage-host.ts";

/** A message that arrived while a run is active: interrupt, or bound the queue per cap/drop. */
export function applyQueueMode(row: InboxRow, host: TriageHost): void {
  const { mode, cap, drop } = queuePolicy(host.config, host.settings(), row.event.envelope.channel);
  if (mode === "interrupt") {
    host.abortActiveRun("interrupted by a newer message (queue mode interrupt)");
    return;
  }
  // OpenClaw ignores a cap below 1.
  if (cap < 1) return;
  const queued = host.store.inbox.byState("queued");
  if (queued.length <= cap) return;
  const now = Date.now();
  const victims = drop === "new" ? [row] : queued.slice(0, queued.length - cap);
  const summary = host.store.meta.getJson("droppedSummary") ?? [];
  for (const victim of victims) {
    host.store.inbox.settle(victim.seq, null, now);
    host.emit(victim.seq, {
      type: "error",
      code: "queue_full",
      message: `dropped: more than ${cap} messages queued (messages.queue.cap)`,
    });
    if (drop === "summarize") summary.push(summarizeLine(victim));
  }
  if (drop === "summarize") host.store.meta.setJson("droppedSummary", summary.slice(-cap));
}

/** One line for the summary the next run reads of messages the cap dropped. */
function summarizeLine(row: InboxRow): string {
  const said = row.prepared?.text ?? row.event.envelope.text;
  const text = (row.prepared?.from ? `${row.prepared.from.label}: ${said}` : said)
    .replace(/\s+/g, " ")
    .trim();
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
