import type { Usage } from "../../../functions/agent/types.ts";
import type { SessionState } from "../state.ts";
import type { ResponseOutcome, ResponseStatus } from "./store.ts";

/**
 * Records how the /v1/responses responses answered by a run's events ended, inside the transaction
 * that records the run's end (run/finish.ts) or its wait for the caller (client-tools.ts). Each
 * response reports the usage of its own part of the run: a run resumed after function calls has
 * already reported what it used before them. Returns that usage (undefined: no response open).
 */
export function finishResponses(
  s: SessionState,
  runId: string,
  seqs: readonly number[],
  status: ResponseStatus,
  outcome: Omit<ResponseOutcome, "usage" | "modelRef">,
  now: number,
): Usage | undefined {
  const open = s.store.responses.openForSeqs(seqs);
  if (!open.length) return undefined;
  const run = s.store.runs.get(runId);
  const reported = s.store.responses.reportedUsage(runId);
  const usage: Usage = {
    inputTokens: (run?.inputTokens ?? 0) - reported.inputTokens,
    outputTokens: (run?.outputTokens ?? 0) - reported.outputTokens,
    cacheReadTokens: (run?.cacheReadTokens ?? 0) - reported.cacheReadTokens,
    cacheWriteTokens: (run?.cacheWriteTokens ?? 0) - reported.cacheWriteTokens,
  };
  for (const [index, record] of open.entries()) {
    s.store.responses.finish(
      record.id,
      runId,
      status,
      {
        ...outcome,
        modelRef: run?.modelRef ?? "",
        // Several responses answered by one run (queued together): the usage is counted once.
        usage: index === 0 ? usage : zero(),
      },
      now,
    );
  }
  return usage;
}

function zero(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}
