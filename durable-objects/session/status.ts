import { sandboxUsage } from "./exec-report.ts";
import type { SessionSettings, SessionStatus } from "../../functions/commands/session-control.ts";
import {
  modelReasons,
  resolveReasoningLevel,
  resolveThinkLevel,
} from "../../functions/agent/thinking-level.ts";
import { estimateTokens } from "../../functions/agent/compaction.ts";
import { queuePolicy } from "./inbox/queue-policy.ts";
import { currentSessionId } from "./lifecycle.ts";
import { contextWindow } from "./run/context.ts";
import { modelMessages } from "./run/pruning.ts";
import { selectionFor } from "./run/deps.ts";
import { settings } from "./settings.ts";
import { sessionSendDecision } from "./outbox/send-gate.ts";
import type { SessionState } from "./state.ts";
import { lastInteractionAt, lastRoute } from "./last-inbound.ts";

function sessionFacts(s: SessionState) {
  const sessionId = currentSessionId(s, Date.now());
  const totals = s.store.runs.sessionTotals(sessionId);
  return {
    sessionKey: s.store.meta.get("sessionKey") ?? "",
    agentId: s.store.meta.get("agentId") ?? "main",
    sessionId,
    sessionStartedAt: Number(s.store.meta.get("sessionStartedAt") ?? Date.now()),
    lastInteractionAt: lastInteractionAt(s.store) ?? null,
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    runs: totals.runs,
    compactions: Number(s.store.meta.get("compactions") ?? 0),
    activeRunId: s.active?.runId ?? null,
    queued: s.store.inbox.byState("queued").length,
    settings: settings(s),
  };
}

/** /status and the session_status tool. Reads storage only: never waits on a run or the model. */
export function status(s: SessionState): SessionStatus {
  const facts = sessionFacts(s);
  const current = facts.settings;
  const selection = selectionFor(s.config, s.env, facts.agentId, current.modelOverride);
  const channel = lastRoute(s.store)?.channel ?? "";
  return {
    sessionKey: facts.sessionKey,
    sessionId: facts.sessionId,
    agentId: facts.agentId,
    model: selection.primary ?? "(none configured)",
    ...(selection.origin === "demo" || selection.origin === "key-default"
      ? { modelOrigin: selection.origin }
      : {}),
    modelOverride: current.modelOverride,
    inputTokens: facts.inputTokens,
    outputTokens: facts.outputTokens,
    contextTokens: estimateTokens(modelMessages(s, facts.sessionId)),
    contextWindow: contextWindow(s, undefined),
    queue: queuePolicy(s.config, current, channel),
    ...thinkingStatus(s, facts.agentId, current, selection.primary),
    send: sendStatus(s, channel, current),
    verbose: current.verbose ?? "off",
    sessionStartedAt: facts.sessionStartedAt,
    lastInteractionAt: facts.lastInteractionAt ?? undefined,
    compactions: facts.compactions,
    runActive: facts.activeRunId !== null,
    queuedMessages: facts.queued,
    spend: spendView(s, facts.sessionId),
    responseUsage: current.responseUsage ?? s.config.messages.responseUsage,
  };
}

function spendView(s: SessionState, sessionId: string): SessionStatus["spend"] {
  // meta spend's platformUsd holds what runs finished before schema step 12 added; each later run
  // carries its own estimate in its row (runs-store.ts platformUsd).
  const { platformUsd, ...spend } = s.store.modelCalls.spend(sessionId);
  return {
    ...spend,
    platformUsd: (platformUsd ?? 0) + s.store.runs.platformUsd(sessionId),
    sandbox: sandboxUsage(s, sessionId),
  };
}

/** The levels the next run would use, and where the thinking level comes from (tools/thinking). */
function thinkingStatus(
  s: SessionState,
  agentId: string,
  current: SessionSettings,
  modelRef: string | undefined,
): Pick<SessionStatus, "thinkLevel" | "thinkSource" | "reasoningLevel"> {
  const think = resolveThinkLevel(s.config, agentId, {
    session: current.thinkLevel,
    modelReasons: modelReasons(s.config, s.env, modelRef),
  });
  return {
    thinkLevel: think.level,
    thinkSource: think.source === "message" ? "session" : think.source,
    reasoningLevel: resolveReasoningLevel(s.config, agentId, { session: current.reasoningLevel }),
  };
}

/** What /send and session.sendPolicy decide for the chat this session last answered. */
function sendStatus(
  s: SessionState,
  channel: string,
  current: SessionSettings,
): SessionStatus["send"] {
  if (!channel)
    return {
      allowed: current.sendPolicy !== "deny",
      source: current.sendPolicy ? "session" : "default",
    };
  const decision = sessionSendDecision(s, { channel });
  if (decision.allowed)
    return { allowed: true, source: current.sendPolicy === "allow" ? "session" : "default" };
  return { allowed: false, source: decision.reason };
}
