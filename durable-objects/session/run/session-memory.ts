import { unfenceForDisplay } from "../../../functions/agent/untrusted-text.ts";
import {
  writeSessionCapture,
  type CapturedMessage,
  type SessionCapture,
} from "../../../functions/agent/memory/session-capture.ts";
import { sessionMemoryHookConfig } from "../../../functions/config/memory-keys.ts";
import type { SessionState } from "../state.ts";

/**
 * The session-memory hook inside the SessionDO. When /new or /reset (or a daily/idle auto-reset)
 * ends a session, its last messages are captured into storage in the same step, and written to
 * `memory/YYYY-MM-DD-HHMM.md` by the next alarm pass (nextAlarmAt wakes for a pending capture), so
 * the command's reply never waits on Postgres and a crash in between loses nothing.
 * After /new or /reset the next run also gets today's and yesterday's notes (startupContext).
 */

const PENDING_KEY = "sessionMemoryPending";
const STARTUP_KEY = "startupContextSession";
const MAX_ATTEMPTS = 5;
const MAX_PENDING = 20;

function pending(s: SessionState): SessionCapture[] {
  return s.store.meta.getJson(PENDING_KEY) ?? [];
}

/** Takes the ending session's last user/assistant messages; call before the session id rotates. */
export function captureEndingSession(s: SessionState, reason: string, now = Date.now()): void {
  const hook = sessionMemoryHookConfig(s.config);
  const sessionId = s.store.meta.get("sessionId");
  if (!hook.enabled || !sessionId) return;
  const messages: CapturedMessage[] = [];
  for (const row of s.store.transcript.recent(sessionId)) {
    const m = row.message;
    if (m.role === "user" && m.content.trim())
      messages.push({ role: "user", text: unfenceForDisplay(m.content) });
    else if (m.role === "assistant" && !m.toolCalls?.length && m.content.trim())
      messages.push({ role: "assistant", text: m.content });
  }
  if (!messages.length) return;
  const capture: SessionCapture = {
    sessionKey: s.store.meta.get("sessionKey") ?? "",
    sessionId,
    reason,
    at: now,
    messages: messages.slice(-hook.messages),
  };
  s.store.meta.setJson(PENDING_KEY, [...pending(s), capture].slice(-MAX_PENDING));
}

/** The next run of `sessionId` (the one /new or /reset just started) gets the startup context. */
export function markStartupContext(s: SessionState, sessionId: string): void {
  s.store.meta.set(STARTUP_KEY, sessionId);
}

/** True once for the first run of a session started by /new or /reset. */
export function takeStartupContext(s: SessionState, sessionId: string): boolean {
  if (s.store.meta.get(STARTUP_KEY) !== sessionId) return false;
  s.store.meta.delete(STARTUP_KEY);
  return true;
}

/** When a pending capture wants the alarm (for nextAlarmAt). */
export function pendingCaptureDueAt(s: SessionState): number | undefined {
  const list = pending(s);
  if (!list.length) return undefined;
  return Math.min(
    ...list.map(
      (capture) =>
        capture.at + (capture.attempts ? Math.min(300_000, 2_000 * 2 ** capture.attempts) : 0),
    ),
  );
}

/** Writes the pending captures that are due; a failure is retried with backoff, then given up. */
export async function savePendingCaptures(s: SessionState, now = Date.now()): Promise<void> {
  const list = pending(s);
  if (!list.length) return;
  const agentId = s.store.meta.get("agentId") ?? "main";
  const left: SessionCapture[] = [];
  for (const capture of list) {
    const due =
      capture.at + (capture.attempts ? Math.min(300_000, 2_000 * 2 ** capture.attempts) : 0);
    if (due > now) {
      left.push(capture);
      continue;
    }
    try {
      await writeSessionCapture(s.env, s.config, agentId, capture);
    } catch (error) {
      const attempts = (capture.attempts ?? 0) + 1;
      console.warn(
        `session-memory: saving session ${capture.sessionId} failed (attempt ${attempts}/${MAX_ATTEMPTS}):`,
        error instanceof Error ? error.message : error,
      );
      if (attempts < MAX_ATTEMPTS) left.push({ ...capture, attempts });
    }
  }
  // Captures taken while this pass wrote are kept too.
  const added = pending(s).filter(
    (capture) => !list.some((old) => old.sessionId === capture.sessionId && old.at === capture.at),
  );
  if (left.length || added.length) s.store.meta.setJson(PENDING_KEY, [...left, ...added]);
  else s.store.meta.delete(PENDING_KEY);
}
