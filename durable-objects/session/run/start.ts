import { currentSessionId } from "../lifecycle.ts";
import { settings } from "../settings.ts";
import { retryPending } from "../retry.ts";
import { takeStartupContext } from "./session-memory.ts";
import { takeSystemEvents } from "../inbox/system-events.ts";
import { abandonWaitingRuns } from "../responses/client-tools.ts";
import type { TriagedMessage } from "../inbox/store.ts";
import { prepareRun, type RunPlan } from "./setup.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * Starting a run: the events it answers go from the inbox to a new `runs` row and the user's turn
 * of the transcript, in one transaction (queued → taken, or new → taken for a message triage has
 * just accepted).
 */

/** Takes the next queued events as a new run, or undefined while nothing is ready (debounce). */
export function startNextRun(s: SessionState): RunRow | undefined {
  const queued = s.store.inbox.byState("queued");
  if (!queued.length) return undefined;
  const now = Date.now();
  const plan = prepareRun({ queued, config: s.config, settings: settings(s), now });
  if (!plan) return undefined;
  // A run still waiting for a caller's function call outputs cannot answer them after this turn.
  abandonWaitingRuns(s, now);
  return beginRun(s, plan, now);
}

/**
 * The message triage has just accepted (its row still `new`), started as its own run when that is
 * what startNextRun would do at once: nothing queued before it, no run active or parked, no retry
 * pending. Its decision and its take are then one write instead of `queued` and then `taken`.
 * undefined: it must be queued (triage-pass.ts writes it so). The dispatcher executes the run as a
 * new one (`begunRun`); after a crash it is resumed like any run that had started.
 */
export function startTriagedRun(s: SessionState, triaged: TriagedMessage): RunRow | undefined {
  if (s.active || s.store.runs.active() || retryPending(s)) return undefined;
  if (s.store.inbox.count("queued") > 0) return undefined;
  const row = s.store.inbox.bySeq(triaged.seq);
  if (row?.state !== "new") return undefined;
  const now = Date.now();
  const candidate = {
    ...row,
    state: "queued" as const,
    prepared: triaged.prepared,
    decision: triaged.decision,
  };
  const plan = prepareRun({ queued: [candidate], config: s.config, settings: settings(s), now });
  if (plan?.seqs.length !== 1 || plan.seqs[0] !== row.seq) return undefined;
  abandonWaitingRuns(s, now);
  const run = beginRun(s, plan, now, triaged);
  s.begunRun = run.runId;
  return run;
}

function beginRun(s: SessionState, plan: RunPlan, now: number, triaged?: TriagedMessage): RunRow {
  const runId = crypto.randomUUID();
  const sessionId = currentSessionId(s, now);
  const history = s.store.groupHistory.take();
  s.ctx.storage.transactionSync(() => {
    s.store.runs.insert({
      runId,
      sessionId,
      state: "running",
      route: plan.route,
      modelRef: null,
      progressState: {},
      options: {
        model: plan.model,
        senderIsOwner: plan.senderIsOwner,
        oneShot: plan.oneShot,
        triggerSeqs: plan.seqs,
        timeoutSeconds: plan.timeoutSeconds,
        callKind: plan.callKind,
        startupContext: takeStartupContext(s, sessionId) || undefined,
        ...(plan.clientTools?.length ? { clientTools: plan.clientTools } : {}),
      },
      startedAt: now,
    });
    const text = plan.composeText({
      groupHistory: history,
      droppedSummary: s.store.meta.getJson("droppedSummary"),
      systemEvents: takeSystemEvents(s.store),
    });
    s.store.meta.delete("droppedSummary");
    s.store.transcript.append(
      sessionId,
      runId,
      plan.media.length
        ? { role: "user", content: text, media: plan.media }
        : { role: "user", content: text },
      now,
    );
    for (const seq of plan.seqs) {
      if (seq === triaged?.seq) s.store.inbox.takeTriaged(seq, runId, triaged);
      else s.store.inbox.take(seq, runId);
    }
    for (const seq of plan.superseded) s.store.inbox.settle(seq, null, now);
  });
  for (const seq of plan.superseded)
    s.emit([seq], {
      type: "error",
      code: "superseded",
      message: "a newer message replaced this one (queue mode interrupt/drop)",
    });
  return s.store.runs.get(runId)!;
}
