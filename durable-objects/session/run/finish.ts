import { recordDisplayTurns } from "../outbox/display-log.ts";
import { HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { usageFooter } from "../../../functions/commands/usage.ts";
import type { OutboundFileRef } from "../../../functions/media/outbound.ts";
import type { WebMedia } from "../../session-api.ts";
import { platformUsdAtFinish } from "../upkeep/platform-usage.ts";
import { enqueueFiles, enqueueReply, enqueueRetract } from "../outbox/replies.ts";
import { sessionSendDecision } from "../outbox/send-gate.ts";
import { recordCronOutcome } from "../inbox/automation.ts";
import { queueSubagentReport } from "../subagents/announce.ts";
import { settings } from "../settings.ts";
import { costOfRun } from "./deps.ts";
import { enqueueReasoning } from "./thinking.ts";
import { WEB_CHAT_CHANNEL } from "./web-files.ts";
import { finishResponses } from "../responses/finish.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * A run's end (execute.ts calls it once per run, whatever way the run ended): its state, its one
 * visible reply, files and reasoning in the outbox, its events settled or dead-lettered, and a
 * sub-agent's report to its parent — all in one transaction, so a crash leaves either none of it or
 * all of it. Then the cron outcome and the event the web chat and the HTTP APIs wait for.
 */

/** Records the end of a run and its one visible reply, atomically. */
export function finishRun(
  s: SessionState,
  run: RunRow,
  state: "finished" | "failed" | "aborted",
  reply: string | null,
  silent: boolean,
  errorCode?: string,
  deadReason?: string,
  files: OutboundFileRef[] = [],
  links: WebMedia[] = [],
): void {
  const now = Date.now();
  const events = s.store.inbox.byRun(run.runId);
  const seqs = events.map((row) => row.seq);
  if (state === "finished" && reply && !silent) reply = withUsageFooter(s, run, reply);
  // A normal end settles the run's taken events in its own row (inbox/settled-by-run.ts).
  const settledByEnd = state === "finished" && !deadReason;
  const responseUsage = s.ctx.storage.transactionSync(() => {
    s.store.runs.finish(
      run.runId,
      state,
      now,
      platformUsdAtFinish(s, run.runId, now),
      settledByEnd ? { reply: silent ? "" : reply } : undefined,
    );
    // session.sendPolicy / `/send off`: the run is kept, its delivery held back.
    const shown = !silent && sessionSendDecision(s, run.route).allowed;
    // Thinking shown first takes over the run's live preview; the answer then comes as a new message.
    const reasoned = state === "finished" && !!reply && shown && enqueueReasoning(s, run, now);
    if (reply && shown && !HTTP_CHANNELS.has(run.route.channel))
      enqueueReply(s, `run:${run.runId}`, reasoned ? null : run.runId, run.route, reply, now);
    // No reply takes over the preview (NO_REPLY, aborted): the run's end removes it instead.
    else enqueueRetract(s, run, now);
    // The reply's files (MEDIA: lines) go after its text, recorded in this same transaction.
    if (files.length && shown && !HTTP_CHANNELS.has(run.route.channel))
      enqueueFiles(s, `run:${run.runId}`, null, run.route, files, now);
    // The web chat's files: a turn of their own after the answer, shown again after a reload.
    if (files.length && run.route.channel === WEB_CHAT_CHANNEL)
      recordDisplayTurns(s, [{ role: "assistant", text: "", at: now, files }]);
    for (const { seq, state: was } of events) {
      if (deadReason) s.store.inbox.deadLetter(seq, deadReason, reply, now);
      // An event of the run already settled on its own is settled again with the run's reply.
      else if (!settledByEnd || was !== "taken")
        s.store.inbox.settle(seq, silent ? "" : reply, now);
    }
    // A sub-agent's run reports to its parent, in the transaction that records its end.
    queueSubagentReport(s, run, state, silent ? "" : reply, errorCode, now);
    // A notice in place of an answer (no model, a failed run) is not in the transcript; the web chat still shows it.
    if (state !== "finished" && reply && !silent)
      recordDisplayTurns(s, [{ role: "assistant", text: reply, at: now, notice: true }]);
    // The /v1/responses responses this run answers (responses/finish.ts).
    return state === "finished"
      ? finishResponses(s, run.runId, seqs, "completed", { text: silent ? "" : (reply ?? "") }, now)
      : finishResponses(
          s,
          run.runId,
          seqs,
          "failed",
          {
            text: "",
            error: { code: errorCode ?? state, message: reply ?? "the run was stopped" },
          },
          now,
        );
  });
  recordCronOutcome(s, run, state, reply, (row) =>
    costOfRun(s.config, s.env, row.modelRef ?? "", row).toFixed(6),
  );
  const finished = s.store.runs.get(run.runId)!;
  if (state === "finished") {
    s.emit(seqs, {
      type: "done",
      runId: run.runId,
      text: silent ? "" : (reply ?? ""),
      modelRef: finished.modelRef ?? "",
      ...(links.length ? { media: links } : {}),
      // A response of a run resumed after client function calls reports only its own part.
      usage: responseUsage ?? {
        inputTokens: finished.inputTokens,
        outputTokens: finished.outputTokens,
        cacheReadTokens: finished.cacheReadTokens,
        cacheWriteTokens: finished.cacheWriteTokens,
      },
    });
  } else {
    s.emit(seqs, {
      type: "error",
      code: errorCode ?? state,
      message: reply ?? "the run was stopped",
    });
  }
}

/** `/usage tokens|full` (or `messages.responseUsage`): the run's usage under its answer, on chat channels. */
function withUsageFooter(s: SessionState, run: RunRow, reply: string): string {
  const mode = settings(s).responseUsage ?? s.config.messages.responseUsage;
  // An OpenAI-compatible client parses the content: never add to it.
  if (mode === "off" || run.route.channel === "openai") return reply;
  const totals = s.store.runs.get(run.runId);
  const footer = usageFooter(mode, {
    inputTokens: totals?.inputTokens ?? 0,
    outputTokens: totals?.outputTokens ?? 0,
    cacheReadTokens: totals?.cacheReadTokens ?? 0,
    cacheWriteTokens: totals?.cacheWriteTokens ?? 0,
    costUsd: s.store.modelCalls.costOfRun(run.runId),
    modelRef: totals?.modelRef ?? null,
  });
  return `${reply}\n\n${footer}`;
}
