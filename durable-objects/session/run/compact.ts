import type { CompactResult } from "../../../functions/commands/session-control.ts";
import { sessionLog } from "../log.ts";
import {
  compactionCut,
  droppedSummary,
  estimateTokens,
  needsCompaction,
  summarizeInSlices,
} from "../../../functions/agent/compaction.ts";
import { sessionAuthProfiles } from "./auth-profiles.ts";
import { callModel } from "../../../functions/agent/model-call.ts";
import type { ModelRequest, ModelResult } from "../../../functions/agent/types.ts";
import { contextWindow, sessionMessages } from "./context.ts";
import { modelMessages } from "./pruning.ts";
import { currentSessionId } from "../lifecycle.ts";
import { settings } from "../settings.ts";
import { selectionFor } from "./deps.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { classifyError } from "../../../functions/core/classify-error.ts";
import { budgetStopNotice } from "../../../functions/agent/metering.ts";
import { sessionMeter } from "../upkeep/metering.ts";

type CallModel = (request: ModelRequest) => Promise<ModelResult>;

/** Proactive compaction before a run whose prompt would crowd the model's context window. */
export async function compactIfNeeded(
  s: SessionState,
  run: RunRow,
  system: string,
  call: CallModel,
  signal: AbortSignal,
): Promise<void> {
  const compaction = s.config.agents.defaults.compaction;
  if (!compaction.enabled) return;
  // Pruning first (OpenClaw applies it before compaction): what is judged is what would be sent.
  const messages = modelMessages(s, run.sessionId, {
    system,
    modelOverride: run.options.model,
    now: Date.now(),
  });
  const window = contextWindow(s, run.options.model);
  if (!needsCompaction(messages, system, window, compaction)) return;
  const outcome = await compactRows(s, run.sessionId, call, { window, signal });
  if (outcome.note)
    sessionLog(s, { runId: run.runId }).warn("proactive compaction", {
      sessionId: run.sessionId,
      note: outcome.note,
    });
}

/**
 * Summarises everything but the recent tail into the session's summary, in slices that fit the
 * model's context. When the model cannot summarise for good (a 4xx, a context overflow even per
 * slice), the older turns are dropped with a note instead: compaction always shrinks the context.
 * A transient failure (overloaded, network) is reported and changes nothing; try again later.
 */
async function compactRows(
  s: SessionState,
  sessionId: string,
  call: CallModel,
  options: { window: number; instructions?: string; signal?: AbortSignal },
): Promise<{ compacted: boolean; note?: string; reason?: string }> {
  const rows = s.store.transcript.recent(sessionId);
  const cut = compactionCut(
    rows.map((row) => row.message),
    s.config.agents.defaults.compaction.keepRecentTokens,
  );
  if (cut === 0) return { compacted: false };
  const previous = s.store.meta.get(`summary:${sessionId}`);
  const older = rows.slice(0, cut).map((row) => row.message);
  let summary: string;
  let note: string | undefined;
  try {
    summary = await summarizeInSlices(previous, older, call, {
      contextWindow: options.window,
      reserveTokens: s.config.agents.defaults.compaction.reserveTokensFloor,
      instructions: options.instructions,
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    // A budget stop is not the model failing to summarise: nothing is dropped.
    const budgetStop = budgetStopNotice(error);
    if (budgetStop) return { compacted: false, reason: budgetStop };
    const { class: errorClass, reason } = classifyError(error);
    if (errorClass === "transient")
      return {
        compacted: false,
        reason: `the model could not summarise right now (${reason}); try again later`,
      };
    summary = droppedSummary(previous, cut, reason);
    note = `summarising failed (${reason}), so ${cut} older message(s) were dropped without a summary`;
  }
  s.ctx.storage.transactionSync(() => {
    s.store.transcript.markCompacted(sessionId, rows[cut]!.seq);
    s.store.meta.set(`summary:${sessionId}`, summary);
    s.store.meta.set("compactions", String(Number(s.store.meta.get("compactions") ?? 0) + 1));
  });
  return { compacted: true, note };
}

/** /compact: compacts now with the session's model selection (not while a run is writing). */
export async function compactNow(
  s: SessionState,
  instructions?: string,
  sender?: { channel?: string; senderId?: string },
): Promise<CompactResult> {
  if (s.active)
    return { compacted: false, reason: "a run is in progress; try again when it finishes" };
  const sessionId = currentSessionId(s, Date.now());
  const agentId = s.store.meta.get("agentId") ?? "main";
  const selection = selectionFor(s.config, s.env, agentId, settings(s).modelOverride);
  const before = estimateTokens(sessionMessages(s, sessionId));
  const meter = sessionMeter(s, { kind: "compaction", runId: null, sessionId, ...sender });
  const outcome = await compactRows(
    s,
    sessionId,
    (request) =>
      callModel({
        config: s.config,
        env: s.env,
        selection,
        request,
        meter,
        authProfiles: sessionAuthProfiles(s),
      }),
    {
      window: contextWindow(s, undefined),
      instructions,
    },
  );
  if (!outcome.compacted)
    return {
      compacted: false,
      reason: outcome.reason ?? "nothing older than the recent context to summarise",
    };
  const after = estimateTokens(sessionMessages(s, sessionId));
  return { compacted: true, tokensBefore: before, tokensAfter: after, note: outcome.note };
}
