import type { Usage } from "../../../functions/agent/types.ts";
import type { ModelCallStore } from "../mirror/model-calls.ts";
import type { RunRow } from "../storage-rows.ts";

/**
 * THE USAGE OF A RUN STILL IN PROGRESS: its rounds (`steps`, the bound a resumed run cannot reset:
 * agents.defaults.maxToolIterations), its tokens and the model that last answered. Every model call
 * already writes its `model_calls` row (upkeep/metering.ts) with the run, model and tokens, so the
 * run's row is not rewritten per call (a billed row each, issue 19 item 9): the totals are kept here,
 * in memory, and written into the run's row once, by the UPDATE that records its end
 * (runs-store.ts `finish`). A run this isolate did not start (a restart after a crash or an
 * eviction, a run waiting for a /v1/responses caller) is summed from its model_calls rows the first
 * time it is asked for; those rows stay until the run ends (model-calls.ts `prune`).
 *
 * The calls counted are the ones the run's loop records (`RunHost.recordUsage`): the answered calls
 * of the run's own kind ("turn", or the heartbeat's, cron's, …) and of its memory flush. Compaction,
 * image descriptions, voice and tools' calls are in the session's spend, not in the run's rounds;
 * an attempt that failed is no round. A call answered just before a crash, whose answer the
 * transcript never got, counts: it was sent and paid for, and the resumed run asks again.
 */

export type RunUsage = Pick<
  RunRow,
  "steps" | "modelRef" | "inputTokens" | "outputTokens" | "cacheReadTokens" | "cacheWriteTokens"
>;

/** The kinds of model call that are a run's rounds (see above). */
export function roundKinds(run: Pick<RunRow, "options">): string[] {
  return [run.options.callKind ?? "turn", "memory_flush"];
}

export function isUnfinished(run: Pick<RunRow, "state">): boolean {
  return run.state === "running" || run.state === "waiting";
}

export class RunUsageTally {
  /** Unfinished runs of this isolate, by id; an entry goes when its run ends. */
  private readonly live = new Map<string, RunUsage>();

  constructor(private readonly modelCalls: ModelCallStore) {}

  /** A run this isolate starts: nothing used yet, nothing to read. */
  started(runId: string): void {
    this.live.set(runId, { ...zeroUsage(), modelRef: null });
  }

  /** One more round, answered by `modelRef`. */
  add(row: RunRow, modelRef: string, usage: Usage): void {
    const live = this.of(row);
    live.steps += 1;
    live.modelRef = modelRef;
    live.inputTokens += usage.inputTokens;
    live.outputTokens += usage.outputTokens;
    live.cacheReadTokens += usage.cacheReadTokens;
    live.cacheWriteTokens += usage.cacheWriteTokens;
  }

  /** The usage of an unfinished run so far. */
  of(row: RunRow): RunUsage {
    let live = this.live.get(row.runId);
    if (!live) {
      live = summed(row, this.modelCalls.answeredOfRun(row.runId, roundKinds(row)));
      this.live.set(row.runId, live);
    }
    return live;
  }

  ended(runId: string): void {
    this.live.delete(runId);
  }
}

/**
 * A run's calls summed. Its row's own figures count too: a run in flight when this version was
 * deployed had its earlier calls added to its row per call (they are among its calls, so the larger
 * figure is the total; the row's alone when its oldest calls were swept away before that version).
 */
function summed(row: RunRow, calls: Array<{ modelRef: string; usage: Usage }>): RunUsage {
  const total = zeroUsage();
  for (const { usage } of calls) {
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.cacheReadTokens += usage.cacheReadTokens;
    total.cacheWriteTokens += usage.cacheWriteTokens;
  }
  return {
    steps: Math.max(row.steps, calls.length),
    modelRef: calls.at(-1)?.modelRef ?? row.modelRef,
    inputTokens: Math.max(row.inputTokens, total.inputTokens),
    outputTokens: Math.max(row.outputTokens, total.outputTokens),
    cacheReadTokens: Math.max(row.cacheReadTokens, total.cacheReadTokens),
    cacheWriteTokens: Math.max(row.cacheWriteTokens, total.cacheWriteTokens),
  };
}

function zeroUsage(): Omit<RunUsage, "modelRef"> {
  return { steps: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}
