import {
  estimateRunPlatformCost,
  type PlatformCost,
} from "../../../functions/agent/platform-cost.ts";
import { scopesFor } from "../../../functions/agent/budget-scopes.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/** The estimated platform cost of one finished run, from what this object recorded about it. */
export function runPlatformCostOf(s: SessionState, run: RunRow): PlatformCost {
  const budgetScopes = scopesFor(
    s.config.budgets,
    {
      agentId: s.store.meta.get("agentId") ?? "main",
      sessionKey: s.store.meta.get("sessionKey") ?? "",
      sender: "x",
    },
    run.startedAt,
  ).length;
  return estimateRunPlatformCost(
    {
      events: run.options.triggerSeqs?.length ?? 1,
      alarmPasses: run.resumes + 1,
      modelCalls: s.store.modelCalls.countOfRun(run.runId),
      budgetScopes,
      wallMs: (run.finishedAt ?? run.startedAt) - run.startedAt,
    },
    s.config.metering.platformPrices,
  );
}

/** Adds a finished run's estimate to its session's spend (inside finishRun's transaction). */
export function addRunPlatformCost(s: SessionState, runId: string): void {
  const run = s.store.runs.get(runId);
  if (!run) return;
  const spend = s.store.modelCalls.spend(run.sessionId);
  spend.platformUsd = (spend.platformUsd ?? 0) + runPlatformCostOf(s, run).estimatedUsd;
  s.store.meta.setJson(`spend:${run.sessionId}`, spend);
}
