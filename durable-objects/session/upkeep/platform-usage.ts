import {
  estimateRunPlatformCost,
  type PlatformCost,
} from "../../../functions/agent/platform-cost.ts";
import { scopesFor } from "../../../functions/agent/budget-scopes.ts";
import { runModelCalls, sessionSpend } from "../mirror/model-calls.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/** The estimated platform cost of one finished run, from what this object recorded about it. */
export function runPlatformCostOf(s: SessionState, run: RunRow): PlatformCost {
  const budgetScopes = scopesFor(
    s.config.budgets,
    {
      agentId: s.store.getMeta("agentId") ?? "main",
      sessionKey: s.store.getMeta("sessionKey") ?? "",
      sender: "x",
    },
    run.startedAt,
  ).length;
  return estimateRunPlatformCost(
    {
      events: run.options.triggerSeqs?.length ?? 1,
      alarmPasses: run.resumes + 1,
      modelCalls: runModelCalls(s.ctx.storage.sql, run.runId),
      budgetScopes,
      wallMs: (run.finishedAt ?? run.startedAt) - run.startedAt,
    },
    s.config.metering.platformPrices,
  );
}

/** Adds a finished run's estimate to its session's spend (inside finishRun's transaction). */
export function addRunPlatformCost(s: SessionState, runId: string): void {
  const run = s.store.getRun(runId);
  if (!run) return;
  const spend = sessionSpend(s.store, run.sessionId);
  spend.platformUsd = (spend.platformUsd ?? 0) + runPlatformCostOf(s, run).estimatedUsd;
  s.store.setJson(`spend:${run.sessionId}`, spend);
}
