import type { AttemptReport } from "../../functions/agent/model-call.ts";
import type { Usage } from "../../functions/agent/types.ts";
import { costOfRun } from "./run-deps.ts";
import { countSession, observeSession } from "./metrics.ts";
import type { RunRow } from "./storage.ts";
import type { SessionState } from "./state.ts";

/**
 * What one run reports about itself to operators: counters (session/metrics.ts). Labels are agent,
 * provider, model and outcome words only — never the session key, a sender or any text.
 */
export interface RunTelemetry {
  modelAttempt(report: AttemptReport): void;
  usage(modelRef: string, usage: Usage): void;
  finished(state: "finished" | "failed" | "aborted"): void;
}

export function runTelemetry(s: SessionState, run: RunRow, agentId: string): RunTelemetry {
  return {
    modelAttempt(report) {
      countSession(s, "edgeclaw_model_calls_total", { provider: report.providerId, outcome: report.outcome });
      observeSession(s, "edgeclaw_model_call_duration_seconds", { provider: report.providerId }, report.durationMs / 1000);
    },
    usage(modelRef, usage) {
      const model = modelRef || "none";
      const types: Array<[string, number]> = [
        ["input", usage.inputTokens],
        ["output", usage.outputTokens],
        ["cache_read", usage.cacheReadTokens],
        ["cache_write", usage.cacheWriteTokens],
      ];
      for (const [type, tokens] of types) if (tokens) countSession(s, "edgeclaw_tokens_total", { agent: agentId, model, type }, tokens);
      const spend = costOfRun(s.config, s.env, modelRef, usage);
      if (spend > 0) countSession(s, "edgeclaw_spend_usd_total", { agent: agentId, model }, spend);
    },
    finished(state) {
      countSession(s, "edgeclaw_runs_total", { agent: agentId, outcome: state });
    },
  };
}
