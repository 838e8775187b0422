import type { EdgeclawConfig } from "../../config/schema.ts";
import type { ToolPolicyLayer } from "./policy.ts";
import { subagentLimitsFor } from "../subagent-limits.ts";

/**
 * The sub-agent layer of tool policy (OpenClaw tools/subagents "Tool policy"), applied after every
 * other layer to a child session at `depth` (≥ 1). Every child loses the tools that act for the
 * whole gateway or talk to people directly; a leaf child (depth = maxSpawnDepth) also loses the
 * orchestration tools, so children talk only through the announce chain. `tools.subagents.tools`
 * narrows further (deny wins; allow is a final allow-only filter). None of it can be re-added by
 * allow/alsoAllow elsewhere: a layer can only take tools away.
 */
const ALWAYS_DENIED = [
  "gateway",
  "agents_list",
  "session_status",
  "cron",
  "message",
  "sessions_send",
  "conversations_list",
  "conversations_send",
  "conversations_turn",
];
const ORCHESTRATION = [
  "subagents",
  "sessions_list",
  "sessions_history",
  "sessions_spawn",
  "sessions_yield",
];

export function subagentToolLayers(
  config: EdgeclawConfig,
  depth: number,
  agentId: string,
): ToolPolicyLayer[] {
  if (depth < 1) return [];
  // The child's own agent decides how deep it may go on (its agents.list[].subagents, else the default).
  const leaf = depth >= subagentLimitsFor(config, agentId).maxSpawnDepth;
  const layers: ToolPolicyLayer[] = [
    {
      source: leaf ? "sub-agent (leaf) restrictions" : "sub-agent restrictions",
      deny: leaf ? [...ALWAYS_DENIED, ...ORCHESTRATION] : ALWAYS_DENIED,
    },
  ];
  const own = config.tools.subagents.tools;
  if (own.allow?.length || own.deny?.length)
    layers.push({ source: "tools.subagents.tools", allow: own.allow, deny: own.deny });
  return layers;
}
