import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import { resolveUserTimezone } from "../user-time.ts";

export function createSessionStatusTool(config: EdgeclawConfig): AgentTool {
  return {
    name: "session_status",
    description:
      "Show this session's status card: session, model, usage and the exact current time in the user's time zone.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    async execute(_args, ctx) {
      const status = await ctx.status();
      const timeZone = resolveUserTimezone(config);
      const now = new Date();
      const localTime = new Intl.DateTimeFormat("en-US", {
        timeZone,
        dateStyle: "full",
        timeStyle: "long",
      }).format(now);
      return {
        content: JSON.stringify(
          { ...status, time: { now: now.toISOString(), timeZone, local: localTime } },
          null,
          2,
        ),
      };
    },
  };
}
