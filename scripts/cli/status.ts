import * as z from "zod";
import type { CommandSpec } from "./command-spec.ts";
import { adminRequest } from "./http.ts";

/**
 * `edgeclaw status`: the gateway's sandbox backends as GET /admin/sandbox/status reports them
 * (workers/sandbox-status.ts) — per agent where commands run; the companion's reachability,
 * bubblewrap and running commands; each container's state and open commands — and the commands
 * waiting for approval (GET /admin/exec-approvals/pending).
 */

const running = z.object({
  scope: z.string(),
  execId: z.string(),
  command: z.string(),
  startedAt: z.number(),
  timeoutSeconds: z.number(),
});
const statusSchema = z.object({
  agents: z.array(
    z.object({
      agentId: z.string(),
      backend: z.string(),
      mode: z.string(),
      scope: z.string(),
      network: z.boolean(),
      allowedHosts: z.array(z.string()),
      workspaceAccess: z.string(),
    }),
  ),
  companion: z
    .object({
      url: z.string().nullable(),
      reachable: z.boolean(),
      error: z.string().optional(),
      host: z
        .object({
          bwrap: z.object({ ok: z.boolean(), detail: z.string() }),
          pty: z.boolean(),
          running: z.array(running),
        })
        .optional(),
    })
    .optional(),
  container: z
    .object({
      deployed: z.boolean(),
      problem: z.string().optional(),
      scopes: z.array(
        z.object({
          scope: z.string(),
          error: z.string().optional(),
          running: z.boolean().optional(),
          generation: z.number().optional(),
          egress: z.object({ kind: z.string(), hosts: z.array(z.string()).optional() }).nullish(),
          sleepAfter: z.string().optional(),
          awakeMsTotal: z.number().optional(),
          commands: z.array(z.object({ execId: z.string(), startedAt: z.number() })).optional(),
        }),
      ),
    })
    .optional(),
});
const pendingSchema = z.object({
  sessions: z.array(
    z.object({
      sessionKey: z.string(),
      pending: z.array(z.object({ id: z.string(), command: z.string() })),
    }),
  ),
});

const ago = (ms: number) => `${Math.max(0, Math.round((Date.now() - ms) / 1000))} s ago`;

export function formatStatus(
  status: z.infer<typeof statusSchema>,
  pending: z.infer<typeof pendingSchema>,
): string {
  const lines: string[] = [];
  if (!status.agents.length)
    return "Sandbox: no agent has one (agents.defaults.sandbox.backend): exec is off.";
  lines.push("Sandbox:");
  for (const agent of status.agents)
    lines.push(
      `  agent ${agent.agentId}: ${agent.backend} · mode ${agent.mode} · scope ${agent.scope} · network ${agent.network ? (agent.allowedHosts.length ? `only ${agent.allowedHosts.join(", ")}` : "all") : "none"} · workspace ${agent.workspaceAccess}`,
    );
  const companion = status.companion;
  if (companion) {
    lines.push(
      `Companion (${companion.url ?? "companion.url not set"}): ${companion.reachable ? "reachable" : `NOT reachable — ${companion.error}`}`,
    );
    if (companion.host) {
      lines.push(
        `  bubblewrap: ${companion.host.bwrap.ok ? "works" : `NOT usable — ${companion.host.bwrap.detail}`} · pty ${companion.host.pty ? "available" : "unavailable"}`,
      );
      lines.push(`  running: ${companion.host.running.length}`);
      for (const command of companion.host.running)
        lines.push(
          `    ${command.execId} (${command.scope}) started ${ago(command.startedAt)}, timeout ${command.timeoutSeconds || "none"} s: ${command.command.slice(0, 120)}`,
        );
    }
  }
  const container = status.container;
  if (container) {
    lines.push(
      `Containers: ${container.deployed ? "deployed" : `NOT deployed — ${container.problem}`}`,
    );
    for (const scope of container.scopes) {
      if (scope.error) {
        lines.push(`  ${scope.scope}: could not be asked (${scope.error})`);
        continue;
      }
      lines.push(
        `  ${scope.scope}: ${scope.running ? "running" : "asleep"} · generation ${scope.generation} · egress ${scope.egress?.kind ?? "none"} · sleeps after ${scope.sleepAfter} · awake ${Math.round((scope.awakeMsTotal ?? 0) / 1000)} s so far · ${scope.commands?.length ?? 0} open command(s)`,
      );
      for (const command of scope.commands ?? [])
        lines.push(`    ${command.execId} started ${ago(command.startedAt)}`);
    }
  }
  const waiting = pending.sessions.flatMap((session) =>
    session.pending.map((entry) => `  ${session.sessionKey} · ${entry.id}: ${entry.command}`),
  );
  lines.push(
    waiting.length
      ? `Waiting for approval (control page → Sandbox, or /approve <id> in the chat):\n${waiting.join("\n")}`
      : "Waiting for approval: none",
  );
  return lines.join("\n");
}

export const STATUS_COMMAND: CommandSpec = {
  name: "status",
  args: [],
  options: {},
  summary:
    "the sandbox backends: kind, reachability, bubblewrap, containers, running commands, pending approvals",
  async run({ connection, print }) {
    const conn = connection();
    const [statusJson, pendingJson] = await Promise.all([
      adminRequest(conn, "GET", "/sandbox/status"),
      adminRequest(conn, "GET", "/exec-approvals/pending"),
    ]);
    const status = statusSchema.parse(statusJson);
    const pending = pendingSchema.parse(pendingJson);
    print({ sandbox: statusJson, pendingApprovals: pendingJson }, () =>
      formatStatus(status, pending),
    );
    return 0;
  },
};
