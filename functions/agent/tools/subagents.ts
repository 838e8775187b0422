import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { parseToolArgs } from "./common.ts";
import type { SessionToolsHost } from "./session-tools-host.ts";

const argsSchema = z.object({
  action: z.enum(["list", "cancel"]).default("list"),
  target: z.string().trim().min(1).optional(),
});

/**
 * `subagents` (OpenClaw tools/subagents): this session's children — list them, or cancel one
 * (`target`: its runId, childSessionKey, taskName or list index). Only this session's own
 * children: a child sees its own children, never its siblings'. For status and debugging; the
 * completion arrives by itself (sessions_yield waits for it).
 */
export function createSubagentsTool(host: SessionToolsHost): AgentTool {
  return {
    name: "subagents",
    description:
      "List the sub-agents this session spawned (action list), or stop one (action cancel, target = runId, childSessionKey, taskName or #index). Do not poll this to wait: use sessions_yield.",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["list", "cancel"] },
        target: { type: "string" },
      },
      additionalProperties: false,
    },
    async execute(args) {
      const parsed = parseToolArgs("subagents", argsSchema, args);
      if (parsed.action === "list")
        return { content: JSON.stringify({ subagents: host.children() }, null, 2) };
      if (!parsed.target) return { content: "subagents cancel needs a target", isError: true };
      return { content: await host.kill(parsed.target) };
    },
  };
}
