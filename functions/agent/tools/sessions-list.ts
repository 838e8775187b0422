import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const argsSchema = z.object({
  kinds: z.array(z.enum(["main", "group", "cron", "hook", "subagent", "other"])).optional(),
  limit: z.number().int().min(1).max(100).default(25),
  activeMinutes: z.number().int().positive().optional(),
});

/**
 * `sessions_list` (OpenClaw concepts/session-tool): the sessions this one may see under
 * `tools.sessions.visibility` and the privacy rules (sessions.ts in the SessionDO), newest first.
 * Rows carry the key, agent, kind, channel, chat type, last update and parent; no delivery route,
 * no transcript path, no cost. `visibility` says which scope applied and why it was narrowed.
 */
export function createSessionsListTool(host: SessionToolsHost): AgentTool {
  return {
    name: "sessions_list",
    description:
      "List the sessions you may see (tools.sessions.visibility): key, agent, kind, channel, last update, parent. Filter by kinds (main, group, cron, hook, subagent, other) or activeMinutes. Use a returned sessionKey with sessions_history or sessions_send.",
    parameters: {
      type: "object",
      properties: {
        kinds: { type: "array", items: { type: "string" } },
        limit: { type: "integer", minimum: 1, maximum: 100 },
        activeMinutes: { type: "integer", minimum: 1 },
      },
      additionalProperties: false,
    },
    async execute(args) {
      const parsed = parseToolArgs("sessions_list", argsSchema, args);
      return {
        content: JSON.stringify(
          await host.list({
            limit: parsed.limit,
            ...(parsed.kinds ? { kinds: parsed.kinds } : {}),
            ...(parsed.activeMinutes ? { activeMinutes: parsed.activeMinutes } : {}),
          }),
          null,
          2,
        ),
      };
    },
  };
}
