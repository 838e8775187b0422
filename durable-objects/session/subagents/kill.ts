import { describeError } from "../../../functions/core/describe-error.ts";
import type { SessionState } from "../state.ts";
import { scheduleAlarm } from "../schedule.ts";
import { subagentLimitsFor } from "../../../functions/agent/subagent-limits.ts";
import { queueSubagentReport } from "./announce.ts";
import { activeChildren, parentOf, saveChild } from "./children.ts";
import type { SubagentChild } from "./shapes.ts";

/** Parent side of /subagents kill and `subagents cancel`: asks the child to stop; it still reports once. */
export async function killChild(s: SessionState, child: SubagentChild): Promise<string> {
  if (child.state === "ended")
    return `${child.label ?? child.childKey} already ended (${child.outcome}).`;
  saveChild(
    s.store,
    { ...child, killRequested: true },
    subagentLimitsFor(s.config, s.store.meta.get("agentId") ?? "main").archiveAfterMinutes,
    Date.now(),
  );
  try {
    const stub = s.env.SESSIONS.get(s.env.SESSIONS.idFromName(child.childKey));
    const answer = await stub.stopSubagent("killed by its parent");
    return `Stopping ${child.label ?? child.childKey}: ${answer}. Its report follows.`;
  } catch (error) {
    return `Could not reach ${child.childKey}: ${describeError(error)}`;
  }
}

/**
 * Child side: its own children are stopped first (a stop cascades down the tree), a task that has
 * not started is settled with a report of its own, and a run in progress is aborted — its end
 * (finishRun → queueSubagentReport) is the one report.
 */
export async function stopSubagentHere(s: SessionState, reason: string): Promise<string> {
  if (!parentOf(s.store)) return "not a sub-agent session";
  for (const child of activeChildren(s.store)) await killChild(s, child).catch(() => undefined);
  const now = Date.now();
  let cancelled = 0;
  for (const row of [...s.store.inbox.byState("new"), ...s.store.inbox.byState("queued")]) {
    if (row.event.automation?.subagent?.kind !== "task") continue;
    cancelled++;
    s.ctx.storage.transactionSync(() => {
      s.store.inbox.settle(row.seq, null, now);
      queueSubagentReport(
        s,
        {
          runId: `cancelled:${row.seq}`,
          sessionId: "",
          state: "aborted",
          route: row.event.envelope.route,
          modelRef: null,
          steps: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          progressState: {},
          options: {},
          startedAt: now,
          finishedAt: now,
          resumes: 0,
        },
        "aborted",
        `${reason} before it started`,
        undefined,
        now,
        true,
      );
    });
  }
  const aborted = s.active !== null;
  s.abortActiveRun(reason);
  await scheduleAlarm(s);
  return aborted
    ? "its run was aborted"
    : cancelled
      ? "its task was cancelled"
      : "nothing was running";
}
