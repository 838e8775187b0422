import { pendingToolCalls } from "../../../functions/agent/run-loop.ts";
import type { ToolCall, ToolSpec } from "../../../functions/agent/types.ts";
import type { ClientToolCall } from "../../session-api.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { markParked } from "../run/bounds.ts";
import { finishResponses } from "./finish.ts";
import { platformUsdAtFinish } from "../upkeep/platform-usage.ts";

/**
 * The caller's function tools (/v1/responses). When every call the model is still waiting on is one
 * of them, the run is not executed further and not ended: it is stored as `waiting` (its transcript
 * holds the calls), its response ends with the function_call items, and its events settle. The
 * next request that continues that response with a function_call_output for each call appends them
 * as the calls' results and sets the run running again: the loop goes on from its transcript, so
 * no call is run by the gateway and none is answered twice. A run nobody resumes ends after
 * `gateway.http.endpoints.responses.clientToolTimeoutSeconds`, and a new turn in the conversation
 * ends it at once; either way each open call gets a result saying so, keeping the transcript valid.
 */

export function clientCallsOf(calls: ToolCall[]): ClientToolCall[] {
  return calls.map((call) => ({
    callId: call.id,
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  }));
}

/** The run stops here until the caller answers (execute.ts, on RunAwaitsClient). */
export function suspendForClient(
  s: SessionState,
  run: RunRow,
  calls: ToolCall[],
  text: string,
): void {
  const now = Date.now();
  const waitMs = s.config.gateway.http.endpoints.responses.clientToolTimeoutSeconds * 1000;
  const clientCalls = clientCallsOf(calls);
  const seqs = s.store.inbox.byRun(run.runId).map((row) => row.seq);
  const usage = s.ctx.storage.transactionSync(() => {
    s.store.runs.setWaitState(run.runId, "waiting", {
      ...run.options,
      clientWait: { since: now, until: now + waitMs },
    });
    for (const seq of seqs) s.store.inbox.settle(seq, text, now);
    return finishResponses(s, run.runId, seqs, "completed", { text, calls: clientCalls }, now);
  });
  s.emit(seqs, {
    type: "done",
    runId: run.runId,
    text,
    modelRef: s.store.runs.get(run.runId)?.modelRef ?? "",
    usage: usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    clientToolCalls: clientCalls,
  });
}

/**
 * The caller's outputs for a waiting run: recorded as the calls' results and the run set running
 * again, with the tools of this request (OpenAI's follow-ups send their tools again). Call inside
 * the transaction that accepts the request's event.
 */
export function resumeWithOutputs(
  s: SessionState,
  run: RunRow,
  outputs: Array<{ callId: string; output: string }>,
  clientTools: ToolSpec[] | undefined,
  now: number,
): void {
  const names = new Map(pendingToolCalls(runMessages(s, run)).map((call) => [call.id, call.name]));
  for (const { callId, output } of outputs) {
    s.store.transcript.append(
      run.sessionId,
      run.runId,
      { role: "tool", toolCallId: callId, name: names.get(callId) ?? "", content: output },
      now,
    );
  }
  const { clientWait, ...options } = run.options;
  s.store.runs.setWaitState(run.runId, "running", {
    ...options,
    clientTools,
    waitedMs: (options.waitedMs ?? 0) + Math.max(0, now - (clientWait?.since ?? now)),
  });
  // Picked up by the next pass as a parked run, not as a restart after a crash (bounds.ts).
  markParked(s, run.runId);
}

/** The ids of the calls a waiting run still has no result for. */
export function openCallIds(s: SessionState, run: RunRow): string[] {
  return pendingToolCalls(runMessages(s, run)).map((call) => call.id);
}

/** Ends every waiting run whose wait is over (the alarm pass calls it first). */
export function expireWaitingRuns(s: SessionState, now = Date.now()): void {
  for (const run of s.store.runs.waiting()) {
    const until = run.options.clientWait?.until ?? 0;
    if (until > now) continue;
    endWaitingRun(
      s,
      run,
      `the caller did not send this function call's output within ${s.config.gateway.http.endpoints.responses.clientToolTimeoutSeconds}s (gateway.http.endpoints.responses.clientToolTimeoutSeconds)`,
      now,
    );
  }
}

/** A new turn starts in the conversation: a run still waiting for the caller ends first. */
export function abandonWaitingRuns(s: SessionState, now = Date.now()): void {
  for (const run of s.store.runs.waiting())
    endWaitingRun(s, run, "the conversation went on without this function call's output", now);
}

/** When the earliest wait expires (the alarm plan, schedule.ts). */
export function waitExpiresAt(s: SessionState): number | undefined {
  const times = s.store.runs.waiting().map((run) => run.options.clientWait?.until ?? 0);
  return times.length ? Math.min(...times) : undefined;
}

function endWaitingRun(s: SessionState, run: RunRow, reason: string, now: number): void {
  const record = s.store.responses.waitingFor(run.runId);
  s.ctx.storage.transactionSync(() => {
    for (const call of pendingToolCalls(runMessages(s, run)))
      s.store.transcript.append(
        run.sessionId,
        run.runId,
        {
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content: `No result: ${reason}.`,
          isError: true,
        },
        now,
      );
    // The wait ends unanswered: it counts as waited, not as the object's own time.
    const { clientWait, ...options } = run.options;
    s.store.runs.setWaitState(run.runId, "waiting", {
      ...options,
      waitedMs: (options.waitedMs ?? 0) + Math.max(0, now - (clientWait?.since ?? now)),
    });
    s.store.runs.finish(run.runId, "failed", now, platformUsdAtFinish(s, run.runId, now));
    if (record) s.store.responses.closeCalls(record, reason);
  });
}

function runMessages(s: SessionState, run: RunRow) {
  return s.store.transcript.ofRun(run.runId).map((row) => row.message);
}
