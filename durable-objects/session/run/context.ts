import { resolveModel } from "../../../functions/agent/model-resolve.ts";
import type { Message } from "../../../functions/agent/types.ts";
import { selectionFor } from "./deps.ts";
import { settings } from "../settings.ts";
import type { SessionState } from "../state.ts";

/** What the model sees of the session (summary + transcript) and how much it can see at once. */

/** The session's compaction summary, if any, goes first in what the model sees. */
export function withSummary(s: SessionState, sessionId: string, messages: Message[]): Message[] {
  const summary = s.store.meta.get(`summary:${sessionId}`);
  return summary ? [{ role: "user", content: summary }, ...messages] : messages;
}

/** What the model sees of the session right now (summary + uncompacted transcript). */
export function sessionMessages(s: SessionState, sessionId: string): Message[] {
  return withSummary(
    s,
    sessionId,
    s.store.transcript.recent(sessionId).map((row) => row.message),
  );
}

export function contextWindow(s: SessionState, modelOverride: string | undefined): number {
  const agentId = s.store.meta.get("agentId") ?? "main";
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
