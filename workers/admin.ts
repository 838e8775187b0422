import { Hono } from "hono";
import { modelSelectionFor } from "../functions/agent/model-resolve.ts";
import { rawConfigFromEnv } from "../functions/config/load.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { DatabaseNotConfiguredError } from "../functions/db/client.ts";
import { listAgents, defaultAgentId } from "../functions/routing/agents.ts";
import { checkConfig } from "../functions/routing/config-check.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { adminAccess } from "./admin-access.ts";
import { adminCron, adminSystem } from "./admin-cron.ts";
import { adminAudit } from "./admin-audit.ts";
import { adminBudgets } from "./admin-budgets.ts";
import { adminAuthProfiles } from "./admin-auth-profiles.ts";
import { createLogger } from "../functions/logging/logger.ts";
import { type AdminContext, fail } from "./admin-http.ts";
import { adminMemory } from "./admin-memory.ts";
import { adminDeadLetters } from "./admin-dead-letters.ts";
import { adminOverview } from "./admin-overview.ts";
import { adminCompanion } from "./admin-companion.ts";
import { adminSandbox } from "./sandbox-status.ts";
import { adminSessions } from "./admin-sessions.ts";
import { adminSubagents } from "./admin-subagents.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import { channelDefinitions } from "../functions/channels/registry.ts";
import type { ChannelAdminDeps } from "../functions/channels/channel-admin.ts";
import { COMMANDS } from "../functions/commands/registry.ts";
import { adminSessionEvents } from "./admin-session-events.ts";
import { adminExecApprovals } from "./admin-exec-approvals.ts";
import { adminEnv } from "./admin-env.ts";

/**
 * The operator API under /admin (Bearer = gateway token): mounts each area's routes (pairing and
 * allowlist in admin-access.ts, sessions in admin-sessions.ts, …) and serves agents and the config
 * check itself. Runtime state lives in Postgres and changes only through here (and the CLI that
 * calls it), never by editing the config. Errors are JSON `{ error: { message, type, code } }`.
 */
export const admin = new Hono<{ Bindings: Env }>();

admin.use("*", requireGatewayToken);
admin.route("/budgets", adminBudgets);
// Model providers' auth profiles and their cooldowns: /admin/auth-profiles (workers/admin-auth-profiles.ts).
admin.route("/auth-profiles", adminAuthProfiles);

// Scheduled jobs: /admin/cron (workers/admin-cron.ts).
admin.route("/cron", adminCron);
admin.route("/system", adminSystem);

// The audit trail: /admin/audit (workers/admin-audit.ts).
admin.route("/audit", adminAudit);

// For the control page: dead letters across sessions, and read-only overviews (pairing, channel status, spend, config report).
admin.route("/dead-letters", adminDeadLetters);
// The companion containers' keepers: state and the crash-loop breaker's reset (workers/admin-companion.ts).
admin.route("/companion", adminCompanion);
// Each channel's own routes, declared on its definition (`admin`): /admin/channels/<id>/… (Mattermost's
// native slash commands). What they need from above the channel layer is handed in.
const channelAdminDeps: ChannelAdminDeps = {
  audit: (c, change) => auditAdminChange(c as unknown as AdminContext, change),
  config: (c) => configFromEnv(c.env),
  commands: COMMANDS,
};
for (const channel of channelDefinitions())
  if (channel.admin) admin.route(`/channels/${channel.id}`, channel.admin(channelAdminDeps));
// Why one event got the answer it got: /admin/sessions/:key/events/:dedupKey (workers/admin-session-events.ts).
admin.route("/sessions", adminSessionEvents);
// The sub-agents a session spawned, with run time and cost: /admin/sessions/:key/subagents (workers/admin-subagents.ts).
admin.route("/sessions", adminSubagents);
// Commands allowed always by /approve … allow-always, and their revocation (workers/admin-exec-approvals.ts).
admin.route("/exec-approvals", adminExecApprovals);
// The sandbox backends for operators: kind, reachability, containers, running commands (workers/sandbox-status.ts).
admin.route("/sandbox", adminSandbox);
// AcaClaw's computing environment: envs, packages, disciplines, installs (workers/admin-env.ts).
admin.route("/env", adminEnv);
admin.route("/", adminOverview);
// Pairing and the allowlist: /admin/pairing/…, /admin/allowlist/… (workers/admin-access.ts).
admin.route("/", adminAccess);
// Search, read, reset a session; its dead letters: /admin/sessions/… (workers/admin-sessions.ts).
admin.route("/sessions", adminSessions);

admin.onError((error, c) => {
  if (error instanceof DatabaseNotConfiguredError)
    return fail(c, 503, "database_not_configured", error.message);
  createLogger(configFromEnv(c.env), c.env, { path: new URL(c.req.url).pathname }).error(
    "admin request failed",
    { error },
  );
  return fail(
    c,
    500,
    "internal_error",
    `admin request failed: ${error instanceof Error ? error.message : String(error)}`,
  );
});

// ---- agents and config ----------------------------------------------------------------------

admin.get("/agents", (c) => {
  const config = configFromEnv(c.env);
  const agents = listAgents(config);
  const fallbackDefault = defaultAgentId(config);
  const list = agents.length
    ? agents
    : [{ id: fallbackDefault, default: true, model: undefined, name: undefined }];
  return c.json({
    agents: list.map((agent) => ({
      id: agent.id,
      name: agent.name ?? null,
      default: agent.id === fallbackDefault,
      // The model that answers: the agent's, the default, or what a provider key / the demo switch gives.
      model: modelSelectionFor(config, c.env, agent.id).primary ?? null,
      bindings: config.bindings
        .filter((b) => b.agentId.toLowerCase() === agent.id)
        .map((b) => b.match),
    })),
  });
});

admin.get("/config/check", (c) => {
  let raw: unknown;
  try {
    // The config in force as the user wrote it (EDGECLAW_CONFIG, else the bundled one), the same
    // input the control page's report and `config check --file` read. Never the parsed config: its
    // defaults are not a config anyone wrote (the default companion key lists no channels, which
    // the schema refuses when it is written), so a valid file was called INVALID here.
    raw = rawConfigFromEnv(c.env);
  } catch (error) {
    return c.json({
      ok: false,
      errors: [
        `EDGECLAW_CONFIG is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      ],
      warnings: [],
    });
  }
  return c.json(checkConfig(raw, c.env));
});

admin.post("/config/check", async (c) => {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return fail(c, 400, "invalid_body", "body must be the config as JSON");
  }
  return c.json(checkConfig(raw, c.env));
});

admin.route("/memory", adminMemory);

admin.all("*", (c) =>
  fail(c, 404, "not_found", `no admin route ${c.req.method} ${new URL(c.req.url).pathname}`),
);
