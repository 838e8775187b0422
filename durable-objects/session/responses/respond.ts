import type { ResponsesAnswer, ResponsesTurn, RoutedEvent, RunEvent } from "../../session-api.ts";
import type { RunRow } from "../storage.ts";
import { zeroUsage, type SessionState } from "../state.ts";
import { runEventStream } from "../run-event-stream.ts";
import { scheduleAlarm } from "../schedule.ts";
import { countSession } from "../upkeep/metrics.ts";
import { openCallIds, resumeWithOutputs } from "./client-tools.ts";
import type { ResponseRecord } from "./store.ts";

/**
 * One /v1/responses turn inside its session, decided synchronously before anything is stored:
 * - a request whose event this session already holds (a retry with the same Idempotency-Key) is
 *   answered from the recorded response, never run again;
 * - previous_response_id must name this conversation's latest response, given to the same scope
 *   (else 404, as if it did not exist, or 400): the session has one transcript, so a response can
 *   be continued once, from its end;
 * - a previous response that ended with function calls is continued only by an output for each
 *   call, which resumes its waiting run (client-tools.ts); anything else is refused.
 * A refusal stores nothing. An accepted turn stores its event and its response record in one
 * transaction, and the caller reads the run's events like chat()'s.
 */
export function respond(
  s: SessionState,
  turn: ResponsesTurn,
  accept: (event: RoutedEvent, alongside: (seq: number) => void) => number | null,
): ResponsesAnswer {
  const { store } = s;
  const dedupKey = turn.event.envelope.dedupKey;
  const recorded = settled(s, store.responses.byDedupKey(dedupKey));
  if (recorded && recorded.scope === turn.scope) return replay(s, recorded);
  if (recorded || store.inbox.byKeyOrAlias(dedupKey))
    return refuse(
      409,
      "idempotency_key_reused",
      "This Idempotency-Key was used for another request",
      "idempotency-key",
    );

  const previousId = turn.previousResponseId ?? null;
  let waiting: RunRow | undefined;
  if (previousId) {
    const previous = settled(s, store.responses.get(previousId));
    if (!previous || previous.scope !== turn.scope)
      return refuse(
        404,
        "previous_response_not_found",
        `Previous response with id '${previousId}' not found.`,
        "previous_response_id",
      );
    if (previous.status === "in_progress")
      return refuse(
        400,
        "previous_response_in_progress",
        `Previous response '${previousId}' is still in progress.`,
        "previous_response_id",
      );
    if (store.responses.newest()?.id !== previous.id)
      return refuse(
        400,
        "previous_response_superseded",
        `Previous response '${previousId}' was already continued; this gateway keeps one transcript per conversation, so only its latest response can be continued.`,
        "previous_response_id",
      );
    const calls = previous.outcome?.calls ?? [];
    const run = previous.runId ? store.runs.get(previous.runId) : undefined;
    // /new, /reset or an operator's reset since: that transcript is no longer the model's context.
    if (run && run.sessionId !== store.meta.get("sessionId"))
      return refuse(
        400,
        "previous_response_reset",
        `The conversation of previous response '${previousId}' was reset since; start a new one without previous_response_id.`,
        "previous_response_id",
      );
    if (calls.length && !previous.outcome?.callsClosed && run?.state === "waiting") {
      const problem = checkOutputs(openCallIds(s, run), turn);
      if (problem) return problem;
      waiting = run;
    } else if (calls.length && turn.toolOutputs?.length) {
      // Too late for outputs; a new message still continues the conversation (each call has a
      // result in the transcript saying none came).
      return refuse(
        400,
        "function_calls_closed",
        `The function calls of previous response '${previousId}' can no longer be answered: ${previous.outcome?.callsClosed ?? "its run ended"}.`,
        "previous_response_id",
      );
    }
  }
  if (!waiting && turn.toolOutputs?.length)
    return refuse(
      400,
      "no_function_calls",
      previousId
        ? `Previous response '${previousId}' has no function calls waiting for output.`
        : "function_call_output items need previous_response_id: the response whose calls they answer.",
      "input",
    );

  const now = Date.now();
  const record = (seq: number, runId: string | null) =>
    store.responses.insert({
      id: turn.responseId,
      dedupKey,
      seq,
      scope: turn.scope,
      previousId,
      runId,
      createdAt: now,
    });
  let seq: number | null;
  if (waiting) {
    const run = waiting;
    seq = s.ctx.storage.transactionSync(() => {
      const stored = store.inbox.insert(turn.event, now);
      if (stored === null) return null;
      store.inbox.take(stored, run.runId);
      resumeWithOutputs(s, run, turn.toolOutputs ?? [], turn.event.clientTools, now);
      record(stored, run.runId);
      return stored;
    });
    if (seq !== null)
      countSession(s, "edgeclaw_events_accepted_total", { channel: turn.event.envelope.channel });
    void scheduleAlarm(s);
  } else {
    seq = accept(turn.event, (stored) => record(stored, null));
  }
  if (seq === null)
    return refuse(
      409,
      "idempotency_key_reused",
      "This Idempotency-Key was used for another request",
      "idempotency-key",
    );
  const { readable, write } = runEventStream();
  s.subscribe(seq, write);
  if (s.active) write({ type: "queued" });
  return {
    ok: true,
    id: turn.responseId,
    createdAt: now,
    previousResponseId: previousId,
    events: readable,
  };
}

/** Each open call answered exactly once, nothing else, and no message beside the outputs. */
function checkOutputs(open: string[], turn: ResponsesTurn): ResponsesAnswer | undefined {
  const outputs = turn.toolOutputs ?? [];
  const missing = open.find((callId) => !outputs.some((output) => output.callId === callId));
  if (missing)
    return refuse(
      400,
      "missing_function_call_output",
      `No tool output found for function call ${missing}.`,
      "input",
    );
  const seen = new Set<string>();
  for (const { callId } of outputs) {
    if (!open.includes(callId))
      return refuse(
        400,
        "unknown_call_id",
        `No function call with call_id '${callId}' is waiting for output.`,
        "input",
      );
    if (seen.has(callId))
      return refuse(
        400,
        "duplicate_function_call_output",
        `More than one output for call_id '${callId}'.`,
        "input",
      );
    seen.add(callId);
  }
  if (turn.event.envelope.text.trim() || turn.event.envelope.attachments?.length)
    return refuse(
      400,
      "unsupported_input",
      "Answer function calls with function_call_output items only; send a new message in the next request.",
      "input",
    );
  return undefined;
}

/**
 * A response whose event was answered without a run (a command, a refusal: the notice is the
 * reply) has ended too: recorded as completed with that reply when it is next read.
 */
function settled(s: SessionState, record: ResponseRecord | undefined): ResponseRecord | undefined {
  if (record?.status !== "in_progress") return record;
  const row = s.store.inbox.bySeq(record.seq);
  if (row && row.state !== "settled") return record;
  const outcome = { text: row?.reply ?? "", usage: zeroUsage(), modelRef: "" };
  s.store.responses.finish(record.id, row?.runId ?? null, "completed", outcome, Date.now());
  return s.store.responses.get(record.id);
}

/** A recorded response again: its outcome if it ended, else the run's events as they come. */
function replay(s: SessionState, record: ResponseRecord): ResponsesAnswer {
  const { readable, write } = runEventStream();
  const answer: ResponsesAnswer = {
    ok: true,
    id: record.id,
    createdAt: record.createdAt,
    previousResponseId: record.previousId,
    events: readable,
  };
  const outcome = record.outcome;
  if (outcome && record.status !== "in_progress") {
    write(
      outcome.error
        ? { type: "error", code: outcome.error.code, message: outcome.error.message }
        : ({
            type: "done",
            runId: record.runId ?? "",
            text: outcome.text,
            usage: outcome.usage,
            modelRef: outcome.modelRef,
            ...(outcome.calls?.length ? { clientToolCalls: outcome.calls } : {}),
          } satisfies RunEvent),
    );
    return answer;
  }
  const row = s.store.inbox.bySeq(record.seq);
  if (!row || row.state === "settled") {
    write({
      type: "done",
      runId: row?.runId ?? "",
      text: row?.reply ?? "",
      usage: zeroUsage(),
      modelRef: "",
    });
  } else {
    s.subscribe(row.seq, write);
    if (s.active) write({ type: "queued" });
  }
  return answer;
}

function refuse(
  status: 400 | 404 | 409,
  code: string,
  message: string,
  param: string | null,
): ResponsesAnswer {
  return { ok: false, status, code, message, param };
}
