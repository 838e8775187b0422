import type { EdgeclawConfig, ToolPolicyConfig } from "../../config/schema.ts";

/**
 * Tool policy as gateway/config-tools describes it: `tools.profile` sets a base allowlist, then
 * `tools.allow` / `tools.deny` narrow it, then the agent's own `tools` block narrows further (its
 * profile replaces the global one). Deny always wins; names are case-insensitive, `*` is a wildcard,
 * `group:<name>` expands to its members. A tool the policy removes is never sent to the model.
 */

export const TOOL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  "group:runtime": [
    "exec",
    "process",
    "code_execution",
    "bash",
    "env_install",
    "env_create",
    "env_status",
  ],
  "group:fs": ["read", "write", "edit", "apply_patch"],
  "group:sessions": [
    "sessions",
    "sessions_list",
    "sessions_history",
    "sessions_search",
    "conversations_list",
    "conversations_send",
    "conversations_turn",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "session_status",
    "suggest_task",
    "dismiss_task",
  ],
  "group:memory": ["memory_search", "memory_get"],
  "group:web": ["web_search", "x_search", "web_fetch"],
  "group:ui": ["browser", "screen", "terminal", "canvas", "show_widget"],
  "group:automation": ["heartbeat_respond", "cron", "gateway"],
  "group:messaging": ["message"],
  "group:nodes": ["nodes", "computer"],
  "group:agents": [
    "agents_list",
    "get_goal",
    "create_goal",
    "update_goal",
    "update_plan",
    "ask_user",
    "skill_workshop",
  ],
  "group:media": ["image", "image_generate", "music_generate", "video_generate", "tts"],
};

const BUILT_IN_TOOLS = [...new Set(Object.values(TOOL_GROUPS).flat())];
const NOT_OPENCLAW_GROUP = new Set([
  "read",
  "write",
  "edit",
  "apply_patch",
  "exec",
  "process",
  "canvas",
]);
const ALL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  ...TOOL_GROUPS,
  "group:openclaw": BUILT_IN_TOOLS.filter((name) => !NOT_OPENCLAW_GROUP.has(name)),
  // Plugin-owned tools: edgeclaw has none yet, so the group matches nothing.
  "group:plugins": [],
};

export type ToolProfile = "minimal" | "coding" | "messaging" | "full";

export const TOOL_PROFILES: Readonly<Record<Exclude<ToolProfile, "full">, readonly string[]>> = {
  minimal: ["session_status"],
  coding: [
    "group:fs",
    "group:runtime",
    "group:web",
    "group:sessions",
    "group:memory",
    "cron",
    "get_goal",
    "create_goal",
    "update_goal",
    "update_plan",
    "ask_user",
    "skill_workshop",
    "image",
    "image_generate",
    "music_generate",
    "video_generate",
    "bundle-mcp",
  ],
  messaging: [
    "group:messaging",
    "sessions",
    "sessions_list",
    "sessions_history",
    "sessions_search",
    "conversations_list",
    "conversations_send",
    "conversations_turn",
    "sessions_send",
    "sessions_spawn",
    "sessions_yield",
    "subagents",
    "session_status",
    "ask_user",
    "bundle-mcp",
  ],
};

/** One filter: a tool passes if no deny entry matches and (when allow is non-empty) an allow entry does. */
export interface ToolPolicyLayer {
  source: string;
  allow?: readonly string[];
  deny?: readonly string[];
}

type Matcher = (name: string) => boolean;

function entryMatcher(entry: string): Matcher {
  const normalized = entry.trim().toLowerCase();
  const members = ALL_GROUPS[normalized];
  if (members) {
    const set = new Set(members);
    return (name) => set.has(name);
  }
  if (normalized.includes("*")) {
    const pattern = new RegExp(`^${normalized.split("*").map(escapeRegExp).join(".*")}$`);
    return (name) => pattern.test(name);
  }
  return (name) => name === normalized;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

function matchesAny(entries: readonly string[], name: string): boolean {
  return entries.some((entry) => entryMatcher(entry)(name));
}

/** Whether one layer lets `toolName` through. */
export function layerAllows(layer: ToolPolicyLayer, toolName: string): boolean {
  const name = toolName.toLowerCase();
  if (layer.deny && matchesAny(layer.deny, name)) return false;
  if (!layer.allow || layer.allow.length === 0) return true;
  if (matchesAny(layer.allow, name)) return true;
  // `allow: ["write"]` also enables apply_patch (the docs' rule); `deny: ["write"]` does not deny it.
  return name === "apply_patch" && matchesAny(layer.allow, "write");
}

function profileLayer(
  source: string,
  profile: ToolProfile | undefined,
  alsoAllow: readonly string[],
): ToolPolicyLayer | undefined {
  if (!profile || profile === "full") return undefined;
  return { source, allow: [...TOOL_PROFILES[profile], ...alsoAllow] };
}

/** The policy layers in force for `agentId`, lowest first. */
export function resolveToolPolicy(config: EdgeclawConfig, agentId: string): ToolPolicyLayer[] {
  const global = config.tools as ToolPolicyConfig;
  const agent: ToolPolicyConfig | undefined = config.agents.list.find(
    (entry) => entry.id === agentId,
  )?.tools;
  const layers: ToolPolicyLayer[] = [];

  const profile = agent?.profile
    ? profileLayer(`agents.list[${agentId}].tools.profile`, agent.profile, agent.alsoAllow ?? [])
    : profileLayer("tools.profile", global.profile, [
        ...(global.alsoAllow ?? []),
        ...(agent?.alsoAllow ?? []),
      ]);
  if (profile) layers.push(profile);
  if (global.allow || global.deny)
    layers.push({ source: "tools", allow: global.allow, deny: global.deny });
  if (agent?.allow || agent?.deny)
    layers.push({ source: `agents.list[${agentId}].tools`, allow: agent.allow, deny: agent.deny });
  return layers;
}

export function isToolAllowed(layers: readonly ToolPolicyLayer[], toolName: string): boolean {
  return layers.every((layer) => layerAllows(layer, toolName));
}
