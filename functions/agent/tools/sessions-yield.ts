import type { AgentTool } from "../types.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

/**
 * `sessions_yield` (OpenClaw concepts/session-tool): ends the current turn without a reply, so
 * the next thing this session sees is a runtime event — above all a sub-agent's completion. The
 * run loop ends the turn after a batch in which this tool succeeded (`endsTurn`); the children's
 * reports then start the next turn. Refused when nothing is running that could report.
 */
export function createSessionsYieldTool(host: SessionToolsHost): AgentTool {
  return {
    name: "sessions_yield",
    description:
      "End this turn and wait: the results of the sub-agents you spawned arrive as the next message. Use it after sessions_spawn when you cannot answer before they report; never poll instead.",
    parameters: {
      type: "object",
      properties: {
        reason: { type: "string", description: "What you are waiting for (for the log)." },
      },
      additionalProperties: false,
    },
    endsTurn: true,
    async execute() {
      const waiting = host.children().filter((child) => child.state !== "ended");
      if (!waiting.length)
        return {
          content:
            "Nothing to wait for: no sub-agent of this session is running. Answer with what you have.",
          isError: true,
        };
      return {
        content: JSON.stringify({
          status: "yielded",
          waitingFor: waiting.map(
            (child) => child.label ?? child.taskName ?? child.childSessionKey,
          ),
        }),
      };
    },
  };
}
