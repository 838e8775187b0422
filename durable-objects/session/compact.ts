import type { CompactResult } from "../../functions/commands/session-control.ts";
import { compactionCut, estimateTokens, needsCompaction, summarizeForCompaction } from "../../functions/agent/compaction.ts";
import { callModel } from "../../functions/agent/model-call.ts";
import type { ModelRequest, ModelResult } from "../../functions/agent/types.ts";
import { contextWindow, currentSessionId, sessionMessages, settings } from "./identity.ts";
import { selectionFor } from "./run-deps.ts";
import type { RunRow } from "./storage.ts";
import type { SessionState } from "./state.ts";

type CallModel = (request: ModelRequest) => Promise<ModelResult>;

/** Proactive compaction before a run whose prompt would crowd the model's context window. */
export async function compactIfNeeded(s: SessionState, run: RunRow, system: string, call: CallModel, signal: AbortSignal): Promise<void> {
  const compaction = s.config.agents.defaults.compaction;
  if (!compaction.enabled) return;
  const messages = sessionMessages(s, run.sessionId);
  const window = contextWindow(s, run.options.model);
  if (!needsCompaction(messages, system, window, compaction)) return;
  await compactRows(s, run.sessionId, call, undefined, signal);
}

/** Summarises everything but the recent tail into the session's summary. */
async function compactRows(
  s: SessionState,
  sessionId: string,
  call: CallModel,
  instructions: string | undefined,
  signal?: AbortSignal,
): Promise<{ compacted: boolean }> {
  const rows = s.store.transcript(sessionId);
  const cut = compactionCut(rows.map((row) => row.message), s.config.agents.defaults.compaction.keepRecentTokens);
  if (cut === 0) return { compacted: false };
  const previous = s.store.getMeta(`summary:${sessionId}`);
  const older = rows.slice(0, cut).map((row) => row.message);
  const { summary } = await summarizeForCompaction(previous ? [{ role: "user", content: previous }, ...older] : older, call, { instructions, signal });
  s.ctx.storage.transactionSync(() => {
    s.store.markCompacted(sessionId, rows[cut]!.seq);
    s.store.setMeta(`summary:${sessionId}`, summary);
    s.store.setMeta("compactions", String(Number(s.store.getMeta("compactions") ?? 0) + 1));
  });
  return { compacted: true };
}

/** /compact: compacts now with the session's model selection (not while a run is writing). */
export async function compactNow(s: SessionState, instructions?: string): Promise<CompactResult> {
  if (s.active) return { compacted: false, reason: "a run is in progress; try again when it finishes" };
  const sessionId = currentSessionId(s, Date.now());
  const agentId = s.store.getMeta("agentId") ?? "main";
  const selection = selectionFor(s.config, agentId, settings(s).modelOverride);
  const before = estimateTokens(sessionMessages(s, sessionId));
  const outcome = await compactRows(s, sessionId, (request) => callModel({ config: s.config, env: s.env, selection, request }), instructions);
  if (!outcome.compacted) return { compacted: false, reason: "nothing older than the recent context to summarise" };
  const after = estimateTokens(sessionMessages(s, sessionId));
  return { compacted: true, tokensBefore: before, tokensAfter: after };
}
