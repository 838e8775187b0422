import { Hono } from "hono";
import type { Env } from "./env.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { knownAgentIds } from "../functions/routing/agents.ts";
import { mainSessionKey } from "../functions/routing/session-key.ts";
import {
  companionBackend,
  containerBackendProblem,
  type ContainerBackendEnv,
} from "../functions/sandbox/backend.ts";
import { sandboxConfigFor, sandboxPlacement } from "../functions/sandbox/placement.ts";
import { hostStatusSchema, type HostStatus } from "../functions/sandbox/wire.ts";
import type { SecretEnv } from "../functions/config/secret-ref.ts";
import type { SandboxDescription } from "../durable-objects/rpc.ts";
import { requireGatewayToken } from "./gateway-auth.ts";

/**
 * GET /admin/sandbox/status (gateway token): the sandbox backends as operators need to see them
 * (`npx edgeclaw status`, the control page's Sandbox view) — per agent where its commands run;
 * for the companion backend whether it answers the signed channel, whether bubblewrap works
 * there and the commands it runs now; for the container backend whether the deploy added the
 * container and, per main-session scope, the container's state and the commands it runs. Never
 * on the unauthenticated /health (commands and hosts are the operator's business).
 *
 * Asking never starts anything: the companion is asked for its status, a container's Durable
 * Object describes itself without waking it. A non-main session's own container (mode
 * "non-main") is listed under that session (`sessions show`), not here.
 */

export interface AgentSandboxStatus {
  agentId: string;
  backend: "companion" | "container";
  mode: string;
  scope: string;
  network: boolean;
  allowedHosts: string[];
  workspaceAccess: string;
}

export interface SandboxStatusReport {
  agents: AgentSandboxStatus[];
  companion?: {
    url: string | null;
    reachable: boolean;
    error?: string;
    host?: HostStatus;
  };
  container?: {
    deployed: boolean;
    problem?: string;
    scopes: Array<{ scope: string } & (SandboxDescription | { error: string })>;
  };
}

export async function sandboxStatusReport(env: Env): Promise<SandboxStatusReport> {
  const config = configFromEnv(env);
  const agents: AgentSandboxStatus[] = [];
  for (const agentId of knownAgentIds(config)) {
    const placement = sandboxPlacement(config, agentId, mainSessionKey(agentId));
    if (!placement) continue;
    const sandbox = sandboxConfigFor(config, agentId);
    agents.push({
      agentId,
      backend: placement.backend,
      mode: sandbox.mode,
      scope: placement.scope,
      network: placement.network,
      allowedHosts: placement.network ? sandbox.docker.allowedHosts : [],
      workspaceAccess: sandbox.workspaceAccess,
    });
  }
  const report: SandboxStatusReport = { agents };
  if (agents.some((agent) => agent.backend === "companion")) {
    const url = config.companion.url ?? null;
    try {
      const host = await companionBackend(config.companion, env as unknown as SecretEnv).call(
        { op: "status" },
        hostStatusSchema,
      );
      report.companion = { url, reachable: true, host };
    } catch (error) {
      report.companion = {
        url,
        reachable: false,
        error: error instanceof Error ? error.message : String(error),
      };
    }
  }
  const containerAgents = agents.filter((agent) => agent.backend === "container");
  if (containerAgents.length) {
    const containerEnv = env as unknown as ContainerBackendEnv;
    const problem = containerBackendProblem(containerEnv);
    const namespace = env.SANDBOX;
    const scopes = [...new Set(containerAgents.map((agent) => agent.scope))];
    report.container = {
      deployed: !problem,
      ...(problem ? { problem } : {}),
      scopes:
        problem || !namespace
          ? []
          : await Promise.all(
              scopes.map(async (scope) => {
                try {
                  return { scope, ...(await namespace.getByName(scope).describe()) };
                } catch (error) {
                  return { scope, error: error instanceof Error ? error.message : String(error) };
                }
              }),
            ),
    };
  }
  return report;
}

export const adminSandbox = new Hono<{ Bindings: Env }>();
adminSandbox.use("*", requireGatewayToken);
adminSandbox.get("/status", async (c) => c.json(await sandboxStatusReport(c.env)));
