import { readFile } from "../../../functions/agent/workspace.ts";
import {
  HEARTBEAT_FILE,
  heartbeatReply,
  isEffectivelyEmpty,
} from "../../../functions/automation/heartbeat.ts";
import { recordRunResult, type CronRunReport } from "../../../functions/automation/cron-store.ts";
import { systemEventFor } from "../../scheduler/events.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import { withDb } from "../../../functions/db/client.ts";
import type { AutomationTrigger } from "../../session-api.ts";
import { queueSystemEvent } from "./system-events.ts";
import { triageSubagent } from "../subagents/triage.ts";
import type { InboxRow, RunRow, SessionStore } from "../storage.ts";
import type { SessionState } from "../state.ts";
import type { TriageHost } from "./triage-host.ts";
import { lastRoute } from "../last-inbound.ts";

/**
 * Events the gateway itself raised (cron jobs, the heartbeat, inbound hooks) inside a session:
 * what triage makes of them, how a heartbeat's reply is judged, and how a cron run's outcome
 * reaches Postgres (kept here durably, sent by the mirror with its retries).
 */

/** OpenClaw's unattended contract for isolated cron and hook turns (automation/cron-jobs "Execution styles"). */
const UNATTENDED = [
  "[Scheduled automation — unattended run]",
  "Nobody is watching this run: do not ask clarifying questions or for approval. Your final reply is the deliverable itself, not a plan or an acknowledgement.",
  "If nothing needs doing, reply HEARTBEAT_OK. State failures plainly.",
].join("\n");

const REPORTS_KEY = "cronReports";

export async function triageAutomation(
  row: InboxRow,
  trigger: AutomationTrigger,
  host: TriageHost,
): Promise<void> {
  const { envelope, agentId } = row.event;
  const now = Date.now();
  const settle = (code: string, message: string) => {
    host.store.inbox.settle(row.seq, null, now);
    host.emit(row.seq, { type: "error", code, message });
  };
  if (trigger.subagent)
    return triageSubagent(row, { ...trigger, subagent: trigger.subagent }, host);
  if (trigger.action === "system-event") {
    // Context for the next run, nothing more (a `wakeMode: "now"` job also sends a heartbeat).
    queueSystemEvent(
      host.store,
      { text: envelope.text, at: envelope.receivedAt },
      host.config.messages.systemEvents.maxQueued,
    );
    settle("system-event", "kept as context for the next run");
    return;
  }
  if (trigger.action === "heartbeat") {
    // One run per session: a beat never queues behind (or interrupts) real work; the next one comes.
    if (host.activeRun || host.store.runs.active() || host.store.inbox.byState("queued").length > 0)
      return settle("heartbeat-skipped", "busy");
    const file = await readFile(host.env, agentId, HEARTBEAT_FILE);
    const waitingEvents = (host.store.meta.getJson("systemEvents") ?? []).length > 0;
    if (file && isEffectivelyEmpty(file.content) && !waitingEvents)
      return settle("heartbeat-skipped", "empty-heartbeat-file");
    const route = resolveRoute(envelope.route, host.store);
    if (!route) return settle("heartbeat-skipped", "no-route");
    const scratch =
      file && !isEffectivelyEmpty(file.content)
        ? `\n\n[${HEARTBEAT_FILE} — heartbeat monitor scratch]\n${file.content.trim()}`
        : "";
    host.store.inbox.prepare(row.seq, {
      text: `${envelope.text}${scratch}`,
      senderIsOwner: true,
      queuedBehindRun: false,
      route,
    });
    return;
  }
  // An unattended agent turn: a fresh transcript each time, the contract first.
  if (trigger.freshSession && !host.activeRun && host.store.meta.get("sessionId"))
    host.rotateSession("isolated automation run");
  if (trigger.untrustedSource) {
    // A hook body is a third party's text: it is fenced under the hook's name, never obeyed as ours.
    host.store.inbox.prepare(row.seq, {
      text: envelope.text,
      from: { channel: "hook", chatType: "direct", label: trigger.untrustedSource },
      senderIsOwner: false,
      queuedBehindRun: host.activeRun !== null,
    });
  } else {
    host.store.inbox.prepare(row.seq, {
      text: `${UNATTENDED}\n\n${envelope.text}`,
      senderIsOwner: true,
      queuedBehindRun: host.activeRun !== null,
    });
  }
}

/** `target: "last"` follows the session's own last route; any other route is already concrete. */
function resolveRoute(route: ReplyRoute, store: SessionStore): ReplyRoute | undefined {
  if (route.channel !== "automation" || route.to !== "last") return route;
  return lastRoute(store);
}

/** The automation trigger of a run (its first triggering event), if it was one. */
export function automationOf(s: SessionState, run: RunRow): AutomationTrigger | undefined {
  return s.store.inbox.byRun(run.runId).find((row) => row.event.automation)?.event.automation;
}

/** A heartbeat's final text after the HEARTBEAT_OK contract; other runs' text unchanged. */
export function visibleReply(
  trigger: AutomationTrigger | undefined,
  text: string,
): { text: string; suppressed: boolean } {
  if (trigger?.action !== "heartbeat" || !trigger.heartbeat) return { text, suppressed: false };
  const visible = heartbeatReply(text, trigger.heartbeat.ackMaxChars);
  return visible === null ? { text: "", suppressed: true } : { text: visible, suppressed: false };
}

/** Keeps the outcome of a cron run until the mirror has written it to Postgres. */
export function recordCronOutcome(
  s: SessionState,
  run: RunRow,
  state: "finished" | "failed" | "aborted",
  reply: string | null,
  costOf: (run: RunRow) => string,
): void {
  const trigger = automationOf(s, run);
  if (!trigger?.cronRunId || !trigger.jobId) return;
  const finished = s.store.runs.get(run.runId) ?? run;
  const report: CronRunReport = {
    runId: trigger.cronRunId,
    jobId: trigger.jobId,
    status: state === "finished" ? "ok" : "error",
    finishedAt: finished.finishedAt ?? Date.now(),
    model: finished.modelRef,
    inputTokens: finished.inputTokens,
    outputTokens: finished.outputTokens,
    costUsd: costOf(finished),
    summary: state === "finished" && reply ? reply.slice(0, 2000) : null,
    error: state === "finished" ? null : (reply ?? state).slice(0, 2000),
    deleteAfterRun: trigger.deleteAfterRun ?? false,
  };
  s.store.meta.setJson(REPORTS_KEY, [...(s.store.meta.getJson(REPORTS_KEY) ?? []), report]);
}

export function hasCronReports(store: SessionStore): boolean {
  return (store.meta.getJson(REPORTS_KEY) ?? []).length > 0;
}

/** Writes kept outcomes to cron_runs (idempotent); each is dropped only once written. */
export async function flushCronReports(s: SessionState): Promise<void> {
  const reports = s.store.meta.getJson(REPORTS_KEY) ?? [];
  if (!reports.length) return;
  const disabled = await withDb(s.env, async (db) => {
    const effects = [];
    for (const report of reports)
      effects.push({
        runId: report.runId,
        ...(await recordRunResult(
          db,
          report,
          s.config.cron.runHistoryLimit,
          s.config.cron.autoDisableAfterErrors,
        )),
      });
    return effects.filter((effect) => effect.autoDisabled);
  });
  // The owning agent learns why its job stopped (context for its next run in the main session).
  for (const { runId, autoDisabled } of disabled) {
    const { jobId, agentId, name, errors } = autoDisabled!;
    const text = `Cron job "${name}" (${jobId}) was disabled after ${errors} consecutive failed runs. Fix the cause, then enable it again (npx edgeclaw cron enable ${jobId}, or the cron tool's update with enabled: true).`;
    const event = systemEventFor(agentId, text, `cron-disabled:${runId}`, "cron", Date.now());
    await s.env.SESSIONS.get(s.env.SESSIONS.idFromName(event.sessionKey)).accept(event);
  }
  const sent = new Set(reports.map((report) => report.runId));
  s.store.meta.setJson(
    REPORTS_KEY,
    (s.store.meta.getJson(REPORTS_KEY) ?? []).filter((report) => !sent.has(report.runId)),
  );
}
