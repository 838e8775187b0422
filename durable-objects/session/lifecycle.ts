import type { SessionState } from "./state.ts";
import { forgetInteraction } from "./last-inbound.ts";

/** The session id under this object's key: which one is in force, and starting a new one. */

/** The session id in force, starting the first one on demand. */
export function currentSessionId(s: SessionState, now: number): string {
  const existing = s.store.meta.get("sessionId");
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
  const first = !s.store.meta.get("sessionId");
  s.ctx.storage.transactionSync(() => {
    s.store.meta.set("sessionId", sessionId);
    s.store.meta.set("sessionStartedAt", String(now));
    s.store.transcript.startSession();
    if (!first) forgetInteraction(s.store);
    s.store.meta.delete("compactions");
  });
  return sessionId;
}
