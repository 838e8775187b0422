import type { EdgeclawConfig } from "../config/schema.ts";
import type { SubagentsDefaults } from "../config/agents-schema.ts";
import { normalizeAgentId } from "../routing/ids.ts";

/**
 * The sub-agent settings that apply to one agent's sessions: `agents.defaults.subagents` with that
 * agent's own `agents.list[].subagents` block over it, key by key (OpenClaw's per-agent
 * `subagents` overrides). `maxConcurrent` is the gateway-wide lane and is never per agent.
 */
export function subagentLimitsFor(config: EdgeclawConfig, agentId: string): SubagentsDefaults {
  const defaults = config.agents.defaults.subagents;
  const id = normalizeAgentId(agentId);
  const own = config.agents.list.find((entry) => normalizeAgentId(entry.id) === id)?.subagents;
  if (!own) return defaults;
  const set = Object.fromEntries(
    Object.entries(own).filter(([key, value]) => value !== undefined && key !== "maxConcurrent"),
  );
  return { ...defaults, ...set };
}
