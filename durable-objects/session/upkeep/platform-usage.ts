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
      // Time a /v1/responses run spent waiting for its caller is not the object's wall time.
      wallMs: Math.max(
        0,
        (run.finishedAt ?? run.startedAt) - run.startedAt - (run.options.waitedMs ?? 0),
      ),
    },
    s.config.metering.platformPrices,
  );
}

/**
 * The estimate of a run that ends `now`, for finishRun to store in the run's own row (the row it
 * writes anyway, so the estimate costs no row of its own; status.ts sums them per session).
 */
export function platformUsdAtFinish(s: SessionState, runId: string, now: number): number {
  const run = s.store.runs.get(runId);
  return run ? runPlatformCostOf(s, { ...run, finishedAt: now }).estimatedUsd : 0;
}
