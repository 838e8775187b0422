import {
  fenceUntrusted,
  newFenceId,
  sanitizeLabel,
} from "../../../functions/agent/untrusted-text.ts";
import type { AutomationTrigger } from "../../session-api.ts";
import type { InboxRow } from "../storage.ts";
import type { TriageHost } from "../inbox/triage-host.ts";
import { childrenOf, saveChild } from "./children.ts";
import { subagentLimitsFor } from "../../../functions/agent/subagent-limits.ts";
import type { SubagentReport } from "./shapes.ts";
import { lastRoute } from "../last-inbound.ts";

/**
 * A sub-agent event in triage. In a child, its task: the session remembers who spawned it and
 * runs the task for the person the parent worked for. In a parent, a child's report (one event
 * per child run, by its dedup key): the child's record ends, and the report is queued as the
 * parent's next turn — at once when the parent is idle (this event woke it), after the run in
 * progress when it is busy. The report answers where the spawning run answered, so a parent
 * with no channel (cron, hooks, the API) still gets its turn; its reply stays in the transcript.
 */
export function triageSubagent(
  row: InboxRow,
  trigger: AutomationTrigger & { subagent: NonNullable<AutomationTrigger["subagent"]> },
  host: TriageHost,
): void {
  const { envelope } = row.event;
  const sub = trigger.subagent;
  if (sub.kind === "task") {
    if (!host.store.meta.getJson("subagentParent"))
      host.store.meta.setJson("subagentParent", sub.parent);
    host.store.inbox.prepare(row.seq, {
      // context "fork": the parent's conversation first, as fenced data (fork.ts).
      text: `${sub.forkContext ? `${sub.forkContext}\n\n` : ""}[Subagent Task]\n${envelope.text}`,
      senderIsOwner: sub.parent.senderIsOwner,
      queuedBehindRun: host.activeRun !== null,
    });
    return;
  }
  if (sub.kind === "message") {
    // Answered in this session's own conversation (its last route), as data from another session.
    const route = lastRoute(host.store);
    host.store.inbox.prepare(row.seq, {
      text: `[Inter-session message from ${sub.fromKey} isUser=false]\n${fenceUntrusted(envelope.text, `session ${sub.fromKey} (sessions_send)`, newFenceId())}`,
      senderIsOwner: sub.senderIsOwner,
      queuedBehindRun: host.activeRun !== null,
      ...(route ? { route } : {}),
    });
    return;
  }
  const report = sub.report;
  const now = Date.now();
  const known = childrenOf(host.store).find((child) => child.childKey === report.childKey);
  saveChild(
    host.store,
    {
      ...(known ?? {
        childKey: report.childKey,
        uuid: report.uuid,
        callId: "",
        parentRunId: "",
        agentId: row.event.agentId,
        task: "",
        createdAt: now - report.stats.runtimeMs,
        ...(report.label ? { label: report.label } : {}),
        ...(report.taskName ? { taskName: report.taskName } : {}),
      }),
      state: "ended",
      outcome: report.outcome,
      result: report.result.slice(0, 2000),
      endedAt: now,
      stats: report.stats,
    },
    subagentLimitsFor(host.config, host.store.meta.get("agentId") ?? "main").archiveAfterMinutes,
    now,
  );
  host.store.inbox.prepare(row.seq, {
    text: announceText(report),
    senderIsOwner: report.senderIsOwner,
    queuedBehindRun: host.activeRun !== null,
    route: report.requesterRoute,
  });
}

const STATUS: Record<SubagentReport["outcome"], string> = {
  ok: "completed; ready for parent review",
  error: "failed",
  timeout: "timed out",
  aborted: "stopped before it finished",
};

/**
 * The parent's view of a report (OpenClaw's completion handoff): the runtime's own lines, the
 * child's reply fenced as data (it is evidence to weigh, not instructions), and what to do next.
 */
export function announceText(report: SubagentReport): string {
  const name = report.label ?? report.taskName;
  const seconds = Math.round(report.stats.runtimeMs / 1000);
  const lines = [
    "[Subagent completion — a runtime event, not a message from the user]",
    `Source: subagent`,
    `Session: ${report.childKey}`,
    ...(name ? [`Task: ${sanitizeLabel(name)}`] : []),
    `Status: ${STATUS[report.outcome]}`,
    `Stats: runtime ${seconds}s · tokens ${report.stats.inputTokens} in / ${report.stats.outputTokens} out${report.stats.modelRef ? ` · ${report.stats.modelRef}` : ""}`,
  ];
  const body = report.result.trim()
    ? fenceUntrusted(
        report.result,
        report.outcome === "ok" ? "the sub-agent's final reply" : "why the sub-agent ended",
        newFenceId(),
      )
    : "(the sub-agent gave no reply text)";
  const next =
    report.outcome === "ok"
      ? "Check this result before you treat the original task as done; continue or spawn follow-up work if more is needed. When nothing more is needed, give the user the final update in your normal voice (do not forward this internal block). If the user already has the answer, reply exactly NO_REPLY."
      : "Decide whether to retry, do the work yourself, or tell the user plainly what could not be done. If the user needs no update, reply exactly NO_REPLY.";
  return [...lines, body, next].join("\n");
}
