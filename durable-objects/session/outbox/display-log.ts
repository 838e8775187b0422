import type { DisplayLog, DisplayTurn } from "../meta.ts";
import type { SessionState } from "../state.ts";

/**
 * What the web chat shows besides the transcript: command turns (`/status` and its answer) and
 * notices that answered instead of the model ("No model configured", a failed run). They never enter
 * the transcript (the model must not see them), so they are kept here, in one meta entry per
 * object: bounded, and replaced when the session rotates.
 */

const KEY = "displayLog";
/** Turns kept for the current session (the web chat shows at most 200 entries anyway). */
export const DISPLAY_LOG_MAX = 200;

export function recordDisplayTurns(s: SessionState, turns: DisplayTurn[]): void {
  const sessionId = s.store.meta.get("sessionId");
  if (!sessionId || turns.length === 0) return;
  const log = s.store.meta.getJson(KEY);
  const kept = log?.sessionId === sessionId ? log.turns : [];
  s.store.meta.setJson(KEY, {
    sessionId,
    turns: [...kept, ...turns].slice(-DISPLAY_LOG_MAX),
  } satisfies DisplayLog);
}

export function displayTurns(s: SessionState, sessionId: string): DisplayTurn[] {
  const log = s.store.meta.getJson(KEY);
  return log?.sessionId === sessionId ? log.turns : [];
}
