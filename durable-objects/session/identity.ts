import type {
  SessionSettings,
  SessionSettingsPatch,
  SessionStatus,
} from "../../functions/commands/session-control.ts";
import { estimateTokens } from "../../functions/agent/compaction.ts";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import type { Message } from "../../functions/agent/types.ts";
import { queuePolicy } from "./inbox/queue-policy.ts";
import { selectionFor } from "./run/deps.ts";
import type { SessionState } from "./state.ts";
import { sessionSpend } from "./mirror/model-calls.ts";

/** The session id in force, starting the first one on demand. */
export function currentSessionId(s: SessionState, now: number): string {
  const existing = s.store.getMeta("sessionId");
  if (existing) return existing;
  return rotateSession(s, now);
}

/**
 * Starts a new sessionId under the same key (first message, /new, /reset, idle/daily reset): the
 * model then sees an empty transcript. Session settings chosen with /model, /queue, /think are the
 * user's and carry over, as OpenClaw keeps user overrides across resets.
 */
export function rotateSession(s: SessionState, now = Date.now()): string {
  const sessionId = crypto.randomUUID();
  s.ctx.storage.transactionSync(() => {
    s.store.setMeta("sessionId", sessionId);
    s.store.setMeta("sessionStartedAt", String(now));
    s.store.deleteMeta("lastInteractionAt");
    s.store.deleteMeta("compactions");
  });
  return sessionId;
}

export function settings(s: SessionState): SessionSettings {
  return s.store.getJson<SessionSettings>("settings") ?? {};
}

/** Applies a patch: `null` clears an override, undefined leaves it alone. */
export function updateSettings(s: SessionState, patch: SessionSettingsPatch): SessionSettings {
  const next: Record<string, unknown> = { ...settings(s) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  s.store.setJson("settings", next);
  return next as SessionSettings;
}

export function queueModeFor(s: SessionState, channel: string): string {
  return queuePolicy(s.config, settings(s), channel).mode;
}

/** The session's compaction summary, if any, goes first in what the model sees. */
export function withSummary(s: SessionState, sessionId: string, messages: Message[]): Message[] {
  const summary = s.store.getMeta(`summary:${sessionId}`);
  return summary ? [{ role: "user", content: summary }, ...messages] : messages;
}

/** What the model sees of the session right now (summary + uncompacted transcript). */
export function sessionMessages(s: SessionState, sessionId: string): Message[] {
  return withSummary(
    s,
    sessionId,
    s.store.transcript(sessionId).map((row) => row.message),
  );
}

export function contextWindow(s: SessionState, modelOverride: string | undefined): number {
  const agentId = s.store.getMeta("agentId") ?? "main";
  const ref = selectionFor(
    s.config,
    s.env,
    agentId,
    modelOverride ?? settings(s).modelOverride,
  ).primary;
  try {
    return ref ? resolveModel(s.config, s.env, ref).contextWindow : 200_000;
  } catch {
    return 200_000;
  }
}

function sessionFacts(s: SessionState) {
  const sessionId = currentSessionId(s, Date.now());
  const totals = s.store.sessionTotals(sessionId);
  return {
    sessionKey: s.store.getMeta("sessionKey") ?? "",
    agentId: s.store.getMeta("agentId") ?? "main",
    sessionId,
    sessionStartedAt: Number(s.store.getMeta("sessionStartedAt") ?? Date.now()),
    lastInteractionAt: s.store.getMeta("lastInteractionAt")
      ? Number(s.store.getMeta("lastInteractionAt"))
      : null,
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    runs: totals.runs,
    compactions: Number(s.store.getMeta("compactions") ?? 0),
    activeRunId: s.active?.runId ?? null,
    queued: s.store.inboxByState("queued").length,
    settings: settings(s),
  };
}

/** /status and the session_status tool. Reads storage only: never waits on a run or the model. */
export function status(s: SessionState): SessionStatus {
  const facts = sessionFacts(s);
  const current = facts.settings;
  const selection = selectionFor(s.config, s.env, facts.agentId, current.modelOverride);
  const channel = s.store.getJson<{ channel: string }>("lastRoute")?.channel ?? "";
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
    contextTokens: estimateTokens(sessionMessages(s, facts.sessionId)),
    contextWindow: contextWindow(s, undefined),
    queue: queuePolicy(s.config, current, channel),
    thinkLevel: current.thinkLevel ?? "off",
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
  const { platformUsd, ...spend } = sessionSpend(s.store, sessionId);
  return { ...spend, platformUsd: platformUsd ?? 0 };
}
