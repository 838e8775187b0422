import type { SessionControl } from "../../functions/commands/session-control.ts";
import { exclusionReason, loadSkills } from "../../functions/agent/skills/catalog.ts";
import { toolsetFor } from "./run/toolset-query.ts";
import { contextReport } from "./run/context-report.ts";
import { exportSession } from "./export.ts";
import { compactNow } from "./run/compact.ts";
import { statusWithAuthProfiles } from "./run/auth-profiles.ts";
import { currentSessionId, rotateSession } from "./lifecycle.ts";
import { settings, updateSettings } from "./settings.ts";
import { status } from "./status.ts";
import { captureEndingSession, markStartupContext } from "./run/session-memory.ts";
import type { SessionState } from "./state.ts";
import { approveExec, stopSessionExecs } from "./exec-background.ts";
import { envCommandReply } from "../../functions/compute-env/chat-command.ts";
import { subagentControl } from "./subagents/commands.ts";

/** What slash commands may do to this session (functions/commands). */
export function sessionControl(s: SessionState): SessionControl {
  return {
    status: () => statusWithAuthProfiles(s, status(s)),
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
    context: async (query) => contextReport(s, query),
    ...subagentControl(s),
    exportSession: async (request) => exportSession(s, request),
    tools: async (query) =>
      toolsetFor(s, query).map(({ name, description }) => ({ name, description })),
    skills: async (query) => {
      const toolNames = toolsetFor(s, query).map((tool) => tool.name);
      const context = {
        config: s.config,
        agentId: query.agentId,
        env: s.env as unknown as Record<string, unknown>,
        toolNames,
      };
      return (await loadSkills(s.env, query.agentId)).map((skill) => {
        const excluded = exclusionReason(skill, context);
        return {
          name: skill.name,
          description: skill.description,
          location: skill.location,
          userInvocable: skill.userInvocable,
          ...(excluded
            ? { excluded }
            : toolNames.includes("read")
              ? {}
              : { excluded: "this chat's agent has no read tool" }),
        };
      });
    },
  };
}
