import { estimateTokens } from "../../../functions/agent/compaction.ts";
import { sessionAuthProfiles } from "./auth-profiles.ts";
import { callModel } from "../../../functions/agent/model-call.ts";
import { localDate } from "../../../functions/agent/memory/session-capture.ts";
import { runAgentLoop, type RunHost, type RunLoopDeps } from "../../../functions/agent/run-loop.ts";
import { resolveUserTimezone } from "../../../functions/agent/user-time.ts";
import type { Message, ModelRequest, ModelResult } from "../../../functions/agent/types.ts";
import type { ModelCallKind } from "../../../functions/agent/metering.ts";
import { contextWindow } from "./context.ts";
import { modelMessages } from "./pruning.ts";
import { sessionMeter } from "../upkeep/metering.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * The pre-compaction memory flush (`agents.defaults.compaction.memoryFlush`): when a session's
 * prompt comes within `softThresholdTokens` of the point where compaction starts, the agent gets
 * one silent turn to write what should outlive the summary to memory/YYYY-MM-DD.md. Once per
 * compaction cycle: the cycle (the session's compaction count) is recorded before the turn runs,
 * so a retry or a resumed run never flushes twice. Nothing of the turn reaches the user or the
 * transcript; only its file writes remain. It runs only where memory/ is writable — the owner's
 * main private session, with write or edit allowed — as OpenClaw skips a read-only workspace.
 */

export function memoryFlushPrompt(date: string): string {
  return `Pre-compaction memory flush. Store durable memories now (use memory/${date}.md; create memory/ if needed). If nothing to store, reply with NO_REPLY.`;
}

const FLUSH_SYSTEM_NOTE =
  "## Memory flush\nThis is a silent housekeeping turn before the conversation is compacted: the user does not see it. Write lasting facts, decisions and open tasks to your memory files, then stop.";

export function memoryFlushDue(
  s: SessionState,
  run: RunRow,
  deps: Pick<RunLoopDeps, "system" | "tools" | "toolContext">,
): boolean {
  const compaction = s.config.agents.defaults.compaction;
  const flush = compaction.memoryFlush;
  if (!compaction.enabled || !flush.enabled || !deps.toolContext.mainPrivateSession) return false;
  if (!deps.tools.some((tool) => tool.name === "write" || tool.name === "edit")) return false;
  if (
    s.store.meta.get(`memoryFlushCycle:${run.sessionId}`) ===
    String(Number(s.store.meta.get("compactions") ?? 0))
  )
    return false;
  const threshold =
    contextWindow(s, run.options.model) - compaction.reserveTokensFloor - flush.softThresholdTokens;
  // Pruned first, as compaction judges it: the flush is due only if what is sent is too large.
  const sent = modelMessages(s, run.sessionId, {
    system: deps.system,
    modelOverride: run.options.model,
    now: Date.now(),
  });
  return estimateTokens(sent, deps.system) > threshold;
}

/** Runs the flush turn when due. Errors are the caller's to log; the main run goes on either way. */
export async function memoryFlushIfDue(
  s: SessionState,
  run: RunRow,
  deps: RunLoopDeps & { callModelAs: (kind: ModelCallKind) => RunLoopDeps["callModel"] },
  signal: AbortSignal,
): Promise<boolean> {
  if (!memoryFlushDue(s, run, deps)) return false;
  s.store.meta.set(
    `memoryFlushCycle:${run.sessionId}`,
    String(Number(s.store.meta.get("compactions") ?? 0)),
  );

  const flushModel = s.config.agents.defaults.compaction.memoryFlush.model;
  const call = flushModel
    ? (request: ModelRequest): Promise<ModelResult> =>
        callModel({
          config: s.config,
          env: s.env,
          selection: { primary: flushModel, fallbacks: [], origin: "config" },
          request,
          authProfiles: sessionAuthProfiles(s),
          meter: sessionMeter(s, {
            kind: "memory_flush",
            runId: run.runId,
            sessionId: run.sessionId,
          }),
        })
    : deps.callModelAs("memory_flush");
  const date = localDate(new Date(), resolveUserTimezone(s.config));
  const base: Message[] = [
    ...modelMessages(s, run.sessionId),
    { role: "user", content: memoryFlushPrompt(date) },
  ];
  const turn: Message[] = [];
  let rounds = 0;
  const host: RunHost = {
    messages: () => [...base, ...turn],
    runMessages: () => [base[base.length - 1]!, ...turn],
    append: (message) => void turn.push(message),
    recordUsage: (modelRef, usage) => {
      rounds++;
      s.store.runs.addUsage(run.runId, modelRef, usage);
    },
    roundsUsed: () => rounds,
    shouldYield: () => false,
    hasSteerMessages: () => false,
    takeSteerMessages: () => [],
    onTextDelta: () => undefined,
    onTool: () => undefined,
  };
  await runAgentLoop(host, {
    ...deps,
    system: `${deps.system}\n\n${FLUSH_SYSTEM_NOTE}`,
    callModel: call,
    signal,
  });
  return true;
}
