import type { EdgeclawConfig } from "../config/schema.ts";
import { sandboxSchema, type SandboxConfig } from "../config/exec-schema.ts";
import { mainSessionKey } from "../routing/session-key.ts";

/**
 * Where one session's commands run (gateway__sandboxing.md): which sandbox (its scope key: one per
 * agent, per session, or one shared), with or without network, isolated by bubblewrap or not.
 * Under mode "non-main" every session but the agent's main one gets a sandbox of its own with no
 * network, whatever `scope` and `docker.network` say: a group never shares a sandbox or the
 * network with the owner's own chat.
 */
export interface SandboxPlacement {
  backend: "companion" | "container";
  scope: string;
  network: boolean;
  /** bwrap on the companion; none in a container (the container is the sandbox) or mode "off". */
  isolation: "bwrap" | "none";
  sandboxed: boolean;
}

export function sandboxPlacement(
  config: EdgeclawConfig,
  agentId: string,
  sessionKey: string,
): SandboxPlacement | undefined {
  const sandbox = sandboxConfigFor(config, agentId);
  if (!sandbox.backend) return undefined;
  const isMain = sessionKey === mainSessionKey(agentId);
  const own = sandbox.mode === "non-main" && !isMain;
  const scope = own
    ? `session:${sessionKey}`
    : sandbox.scope === "session"
      ? `session:${sessionKey}`
      : sandbox.scope === "shared"
        ? "shared"
        : `agent:${agentId}`;
  const sandboxed = sandbox.mode !== "off";
  return {
    backend: sandbox.backend,
    scope,
    network: !own && sandbox.docker.network === "bridge",
    isolation: sandbox.backend === "companion" && sandboxed ? "bwrap" : "none",
    sandboxed,
  };
}

/**
 * `agents.defaults.sandbox` with the agent's own `agents.list[].sandbox` over it (OpenClaw's
 * per-agent override; nested blocks merge key by key), validated as one block.
 */
export function sandboxConfigFor(config: EdgeclawConfig, agentId: string): SandboxConfig {
  const defaults = config.agents.defaults.sandbox;
  const own = (
    config.agents.list.find((agent) => agent.id === agentId) as { sandbox?: unknown } | undefined
  )?.sandbox;
  if (!own || typeof own !== "object") return defaults;
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(own as Record<string, unknown>)) {
    const base = merged[key];
    merged[key] =
      value &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      base &&
      typeof base === "object"
        ? { ...(base as Record<string, unknown>), ...(value as Record<string, unknown>) }
        : value;
  }
  return sandboxSchema.parse(merged);
}
