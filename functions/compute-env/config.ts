import type { EdgeclawConfig } from "../config/schema.ts";
import { computeEnvSchema, type ComputeEnvConfig } from "../config/compute-env-schema.ts";
import { sandboxConfigFor } from "../sandbox/placement.ts";

/**
 * `agents.defaults.computeEnv` with the agent's own `agents.list[].computeEnv` over it, or
 * undefined when the agent has no computing environment: it is off, or the agent has no sandbox
 * (the envs live where commands run).
 */
export function computeEnvFor(
  config: EdgeclawConfig,
  agentId: string,
): ComputeEnvConfig | undefined {
  const defaults = config.agents.defaults.computeEnv;
  const own = (
    config.agents.list.find((agent) => agent.id === agentId) as { computeEnv?: unknown } | undefined
  )?.computeEnv;
  const merged =
    own && typeof own === "object"
      ? computeEnvSchema.parse({ ...defaults, ...(own as Record<string, unknown>) })
      : defaults;
  if (!merged.enabled) return undefined;
  if (!sandboxConfigFor(config, agentId).backend) return undefined;
  return merged;
}
