import type { EdgeclawConfig } from "../../config/schema.ts";
import { modelSelectionFor } from "../model-resolve.ts";
import type { AgentTool } from "../types.ts";
import { subagentLimitsFor } from "../subagent-limits.ts";

/**
 * `agents_list` (OpenClaw tools/subagents "Discovery"): the agent ids this agent may pass to
 * `sessions_spawn` as `agentId` — itself, and what `agents.defaults.subagents.allowAgents` names
 * (`["*"]`: every configured agent; an id that is not configured is left out) — each with the
 * model its runs would use.
 */
export function createAgentsListTool(
  config: EdgeclawConfig,
  agentId: string,
  env: Record<string, unknown> | undefined,
): AgentTool {
  return {
    name: "agents_list",
    description:
      "List the agent ids you may spawn sub-agents under (sessions_spawn agentId), with the model each runs on.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    async execute() {
      const allow = subagentLimitsFor(config, agentId).allowAgents ?? [];
      const configured = config.agents.list.map((entry) => entry.id);
      const ids = [
        agentId,
        ...(allow.includes("*") ? configured : allow.filter((id) => configured.includes(id))),
      ];
      const agents = [...new Set(ids)].map((id) => {
        const entry = config.agents.list.find((candidate) => candidate.id === id);
        let model: string | undefined;
        try {
          model = modelSelectionFor(config, env ?? {}, id).primary;
        } catch {
          model = undefined;
        }
        return {
          id,
          ...(entry?.name ? { name: entry.name } : {}),
          ...(id === agentId ? { self: true } : {}),
          ...(model ? { model } : {}),
          runtime: "subagent",
        };
      });
      return { content: JSON.stringify({ agents }, null, 2) };
    },
  };
}
