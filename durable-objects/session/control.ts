import type { SessionControl } from "../../functions/commands/session-control.ts";
import { compactNow } from "./run/compact.ts";
import { currentSessionId, rotateSession } from "./lifecycle.ts";
import { settings, updateSettings } from "./settings.ts";
import { status } from "./status.ts";
import { captureEndingSession, markStartupContext } from "./run/session-memory.ts";
import type { SessionState } from "./state.ts";
import { approveExec, stopSessionExecs } from "./exec-background.ts";
import { envCommandReply } from "../../functions/compute-env/chat-command.ts";

/** What slash commands may do to this session (functions/commands). */
export function sessionControl(s: SessionState): SessionControl {
  return {
    status: async () => status(s),
    newSession: async (options) => {
      s.abortActiveRun("new session");
      captureEndingSession(s, "/new");
      const sessionId = rotateSession(s);
      markStartupContext(s, sessionId);
      if (options?.model) updateSettings(s, { modelOverride: options.model });
      return { sessionId };
    },
    reset: async (options) => {
      if (options?.soft) return { sessionId: currentSessionId(s, Date.now()) };
      s.abortActiveRun("session reset");
      captureEndingSession(s, "/reset");
      const sessionId = rotateSession(s);
      markStartupContext(s, sessionId);
      return { sessionId };
    },
    stop: async () => {
      const now = Date.now();
      const queued = s.store.inbox.byState("queued");
      for (const row of queued) {
        s.store.inbox.settle(row.seq, null, now);
        s.emit([row.seq], { type: "error", code: "stopped", message: "cancelled by /stop" });
      }
      const abortedRun = s.active !== null;
      s.abortActiveRun("stopped by /stop");
      const killedCommands = await stopSessionExecs(s);
      return { abortedRun, cancelledQueued: queued.length, killedCommands };
    },
    approveExec: async (id, decision, approver) => approveExec(s, id, decision, approver),
    getSettings: async () => settings(s),
    updateSettings: async (patch) => updateSettings(s, patch),
    compact: async (instructions) => compactNow(s, instructions),
    computeEnv: async (agentId, args) => envCommandReply(s.config, s.env, agentId, args),
  };
}
