import * as z from "zod";
import type { EdgeclawConfig } from "../config/schema.ts";
import { DEFAULT_AGENT_ID, normalizeAgentId } from "./ids.ts";

/**
 * The configured agents. The schema's `agents.list` is the primary form; OpenClaw's docs also show
 * `agents.entries.<id>` (a record), accepted here so either spelling of a config works.
 */
export interface AgentSummary {
  id: string;
  default: boolean;
  name?: string;
  model?: string;
  /** Regex mention fallback for this agent (`groupChat.mentionPatterns`). */
  mentionPatterns?: string[];
  /** Display name from `identity.name` (used to derive mention patterns when none are set). */
  identityName?: string;
}

const looseAgentSchema = z
  .object({
    id: z.string().optional(),
    default: z.boolean().optional(),
    name: z.string().optional(),
    model: z.union([z.string(), z.object({ primary: z.string().optional() }).loose()]).optional(),
    identity: z.object({ name: z.string().optional() }).loose().optional(),
    groupChat: z
      .object({ mentionPatterns: z.array(z.string()).optional() })
      .loose()
      .optional(),
  })
  .loose();

const entriesSchema = z.record(z.string(), looseAgentSchema);

export function listAgents(config: EdgeclawConfig): AgentSummary[] {
  const raw: Array<{ id: string; value: z.infer<typeof looseAgentSchema> }> = [];
  for (const entry of config.agents.list) {
    const parsed = looseAgentSchema.safeParse(entry);
    if (parsed.success) raw.push({ id: entry.id, value: parsed.data });
  }
  const entries = entriesSchema.safeParse((config.agents as Record<string, unknown>).entries ?? {});
  if (entries.success) {
    for (const [id, value] of Object.entries(entries.data)) raw.push({ id, value });
  }
  const seen = new Set<string>();
  const agents: AgentSummary[] = [];
  for (const { id, value } of raw) {
    const normalized = normalizeAgentId(id);
    if (seen.has(normalized)) continue;
    seen.add(normalized);
    const model = typeof value.model === "string" ? value.model : value.model?.primary;
    agents.push({
      id: normalized,
      default: value.default === true,
      name: value.name,
      model,
      mentionPatterns: value.groupChat?.mentionPatterns,
      identityName: value.identity?.name ?? value.name,
    });
  }
  return agents;
}

/** `default: true`, else the first listed agent, else `main`. */
export function defaultAgentId(config: EdgeclawConfig): string {
  const agents = listAgents(config);
  return (agents.find((agent) => agent.default) ?? agents[0])?.id ?? DEFAULT_AGENT_ID;
}

/** With no agents configured only `main` exists; otherwise the configured ids. */
export function knownAgentIds(config: EdgeclawConfig): Set<string> {
  const agents = listAgents(config);
  return new Set(agents.length ? agents.map((agent) => agent.id) : [DEFAULT_AGENT_ID]);
}
