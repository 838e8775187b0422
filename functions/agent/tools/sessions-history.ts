import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const argsSchema = z.object({
  sessionKey: z.string().trim().min(1),
  limit: z.number().int().min(1).max(200).default(20),
});

/**
 * `sessions_history` (OpenClaw concepts/session-tool): the newest visible turns of a session this
 * one may see — a bounded, safety-filtered recall view (credential-shaped text masked, each turn
 * cut at 4,000 characters, 80 KB in all), never a raw dump.
 */
export function createSessionsHistoryTool(host: SessionToolsHost): AgentTool {
  return {
    name: "sessions_history",
    description:
      "Read the recent conversation of a session you may see (from sessions_list): user and assistant turns, newest last, credentials masked, long turns cut. Not for waiting on sub-agents (use sessions_yield).",
    parameters: {
      type: "object",
      properties: {
        sessionKey: { type: "string" },
        limit: { type: "integer", minimum: 1, maximum: 200 },
      },
      required: ["sessionKey"],
      additionalProperties: false,
    },
    async execute(args) {
      const parsed = parseToolArgs("sessions_history", argsSchema, args);
      const answer = await host.history(parsed.sessionKey, parsed.limit);
      if ("error" in answer) return { content: answer.error, isError: true };
      return { content: JSON.stringify(answer, null, 2) };
    },
  };
}
