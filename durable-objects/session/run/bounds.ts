import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * The bounds on one run that hold across alarm passes: its wall time from the first start
 * (timeoutSeconds), the restarts after a pass died (maxRunResumes), and the share of one pass it
 * may take before it checkpoints and continues in the next (runSliceSeconds). The model rounds
 * (maxToolIterations) are counted in the runs table by the loop itself.
 */
export interface RunLimits {
  timeoutMs: number;
  maxResumes: number;
  sliceMs: number;
}

/** A run parked on purpose (checkpoint between passes, transient setup failure): resuming it is not a restart. */
const PARKED_KEY = "parkedRun";

export function runLimits(
  config: EdgeclawConfig,
  agentId: string,
  ownTimeoutSeconds?: number,
): RunLimits {
  const defaults = config.agents.defaults;
  const timeoutSeconds =
    ownTimeoutSeconds ??
    config.agents.list.find((agent) => agent.id === agentId)?.timeoutSeconds ??
    defaults.timeoutSeconds;
  return {
    timeoutMs: timeoutSeconds * 1000,
    maxResumes: defaults.maxRunResumes,
    sliceMs: defaults.runSliceSeconds * 1000,
  };
}

export function markParked(s: SessionState, runId: string): void {
  s.store.meta.set(PARKED_KEY, runId);
}

export type Admission = { go: true } | { go: false; notice: string; code: string; reason: string };

/**
 * Decides, before a pass works on a run, whether it may: a run found "running" in storage that was
 * not parked on purpose is a restart after its pass died, and is counted (durably, first) so a step
 * that always crashes or always overruns ends after maxRunResumes instead of billing the model
 * forever; a run past its timeout (from its first start) ends without another model call.
 */
export function admitRun(
  s: SessionState,
  run: RunRow,
  resumed: boolean,
  limits: RunLimits,
  now: number,
): Admission {
  if (resumed) {
    if (s.store.meta.get(PARKED_KEY) === run.runId) {
      s.store.meta.delete(PARKED_KEY);
    } else {
      const resumes = s.store.runs.addResume(run.runId);
      if (resumes > limits.maxResumes) {
        const reason = `the run was interrupted ${resumes} times (agents.defaults.maxRunResumes is ${limits.maxResumes})`;
        return {
          go: false,
          code: "dead_letter",
          reason,
          notice: `⚠️ I had to stop working on this: ${reason}.`,
        };
      }
    }
  }
  if (now >= run.startedAt + (run.options.waitedMs ?? 0) + limits.timeoutMs) {
    const reason = `run timed out after ${limits.timeoutMs / 1000}s (agents.defaults.timeoutSeconds)`;
    return { go: false, code: "timeout", reason, notice: `⚠️ ${reason}` };
  }
  return { go: true };
}
