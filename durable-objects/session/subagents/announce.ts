import { inboundEnvelopeSchema } from "../../../functions/core/envelope.ts";
import { AUTOMATION_CHANNEL } from "../../../functions/core/operator-channels.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import { isSilentReply } from "../../../functions/agent/prompt.ts";
import type { RoutedEvent } from "../../session-api.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { parentOf } from "./children.ts";
import { subagentLimitsFor } from "../../../functions/agent/subagent-limits.ts";
import type { PendingAnnounce, SubagentOutcome, SubagentReport } from "./shapes.ts";

/**
 * A child's report to its parent — never lost, never doubled. When a run that answers the
 * child's task ends (finished, failed, timed out, stopped), its report is queued in the child's
 * storage in the same transaction that records the run's end (`queueSubagentReport`, called by
 * finishRun). The alarm then hands it to the parent (`deliverAnnounces`) as one inbox event whose
 * dedup key names the child run: stored there INSERT OR IGNORE like every event, so a retry after
 * a lost answer, an eviction of either object or a repeated alarm stores it once. A report leaves
 * the queue only once the parent answered "accepted" or "duplicate"; until then it is retried
 * (1 s doubling to 5 min) for up to RETRY_FOR_MS, then logged and dropped.
 */
const KEY = "subagentAnnounces";
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;
/** OpenClaw keeps a blocked completion for 7 days. */
const RETRY_FOR_MS = 7 * 86_400_000;
const RESULT_CHARS = 8_000;

/** Inside finishRun's transaction: queues this run's report when it answered the child's task. */
export function queueSubagentReport(
  s: SessionState,
  run: RunRow,
  state: "finished" | "failed" | "aborted",
  reply: string | null,
  errorCode: string | undefined,
  now: number,
  /** The task was settled without a run (stopped before it started). */
  taskSettled = false,
): void {
  const parent = parentOf(s.store);
  if (!parent) return;
  const answersTask =
    taskSettled ||
    s.store.inbox.byRun(run.runId).some((row) => row.event.automation?.subagent?.kind === "task");
  if (!answersTask) return;
  const totals = s.store.runs.get(run.runId) ?? run;
  const outcome: SubagentOutcome =
    state === "finished"
      ? "ok"
      : state === "aborted"
        ? "aborted"
        : errorCode === "timeout"
          ? "timeout"
          : "error";
  const text = reply ?? (state === "aborted" ? "the run was stopped" : "");
  const report: SubagentReport = {
    childKey: parent.childKey,
    uuid: parent.uuid,
    childRunId: run.runId,
    outcome,
    result: (outcome === "ok" && isSilentReply(text) ? "" : text).slice(0, RESULT_CHARS),
    stats: {
      runtimeMs: Math.max(0, now - run.startedAt),
      inputTokens: totals.inputTokens,
      outputTokens: totals.outputTokens,
      ...(totals.modelRef ? { modelRef: totals.modelRef } : {}),
    },
    ...(parent.label ? { label: parent.label } : {}),
    ...(parent.taskName ? { taskName: parent.taskName } : {}),
    senderIsOwner: parent.senderIsOwner,
    ...(parent.onBehalfOf ? { onBehalfOf: parent.onBehalfOf } : {}),
    requesterRoute: parent.requesterRoute,
  };
  const pending: PendingAnnounce = {
    parentKey: parent.parentKey,
    parentAgentId: parent.parentAgentId,
    report,
    attempts: 0,
    nextAt: now,
    firstAt: now,
  };
  const queued = (s.store.meta.getJson(KEY) ?? []).filter(
    (known) => known.report.childRunId !== run.runId,
  );
  s.store.meta.setJson(KEY, [...queued, pending]);
}

/** The alarm plan's term: the earliest report due to be handed over. */
export function announceDueAt(s: SessionState): number | undefined {
  const queued = s.store.meta.getJson(KEY) ?? [];
  return queued.length ? Math.min(...queued.map((pending) => pending.nextAt)) : undefined;
}

/** Hands every due report to its parent; one that cannot be stored now waits for its retry. */
export async function deliverAnnounces(s: SessionState): Promise<void> {
  const now = Date.now();
  const due = (s.store.meta.getJson(KEY) ?? []).filter((pending) => pending.nextAt <= now);
  for (const pending of due) {
    let outcome: { delivered: true } | { delivered: false; error: string };
    try {
      const stub = s.env.SESSIONS.get(s.env.SESSIONS.idFromName(pending.parentKey));
      // The parent's agent's setting: the report goes to it.
      const timeoutMs = subagentLimitsFor(s.config, pending.parentAgentId).announceTimeoutMs;
      await Promise.race([
        stub.accept(announceEvent(pending)),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs),
        ),
      ]);
      outcome = { delivered: true };
    } catch (error) {
      outcome = { delivered: false, error: describeError(error) };
    }
    settleAttempt(s, pending, outcome, Date.now());
  }
}

function settleAttempt(
  s: SessionState,
  pending: PendingAnnounce,
  outcome: { delivered: true } | { delivered: false; error: string },
  now: number,
): void {
  const others = (s.store.meta.getJson(KEY) ?? []).filter(
    (known) => known.report.childRunId !== pending.report.childRunId,
  );
  if (outcome.delivered) {
    s.store.meta.setJson(KEY, others);
    return;
  }
  if (now - pending.firstAt > RETRY_FOR_MS) {
    console.error(
      JSON.stringify({
        event: "subagent_announce_dropped",
        childKey: pending.report.childKey,
        parentKey: pending.parentKey,
        attempts: pending.attempts + 1,
        error: outcome.error,
      }),
    );
    s.store.meta.setJson(KEY, others);
    return;
  }
  const attempts = pending.attempts + 1;
  const wait = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (attempts - 1));
  s.store.meta.setJson(KEY, [
    ...others,
    { ...pending, attempts, nextAt: now + wait, lastError: outcome.error },
  ]);
}

/** The parent's inbox event for a report, keyed by the child run. */
export function announceEvent(pending: PendingAnnounce): RoutedEvent {
  const { report } = pending;
  return {
    agentId: pending.parentAgentId,
    sessionKey: pending.parentKey,
    envelope: inboundEnvelopeSchema.parse({
      dedupKey: `subagent-announce:${report.childKey}:${report.childRunId}`,
      channel: AUTOMATION_CHANNEL,
      chatType: "direct",
      peerId: "subagent",
      senderId: "subagent",
      text: report.result || `(${report.outcome})`,
      receivedAt: pending.firstAt,
      route: report.requesterRoute,
    }),
    automation: {
      source: "subagent",
      action: "agent-turn",
      subagent: { kind: "announce", report },
      ...(report.onBehalfOf ? { onBehalfOf: report.onBehalfOf } : {}),
    },
  };
}
