import { Hono, type Context } from "hono";
import * as z from "zod";
import { desc, eq } from "drizzle-orm";
import { modelSelectionFor } from "../functions/agent/model-resolve.ts";
import { rawConfigFromEnv } from "../functions/config/load.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import { DatabaseNotConfiguredError, withDb } from "../functions/db/client.ts";
import { sessions, transcriptEntries } from "../functions/db/schema.ts";
import { postgresAccessStore } from "../functions/routing/access-store-postgres.ts";
import { listAgents, defaultAgentId } from "../functions/routing/agents.ts";
import { checkConfig } from "../functions/routing/config-check.ts";
import { normalizeAccountId } from "../functions/routing/ids.ts";
import { approvePairingCode, rejectPairingCode } from "../functions/routing/pairing.ts";
import type { Env } from "./env.ts";
import { requireGatewayToken } from "./gateway-auth.ts";
import { adminCron, adminSystem } from "./admin-cron.ts";
import { adminAudit } from "./admin-audit.ts";
import { adminBudgets } from "./admin-budgets.ts";
import { adminAuthProfiles } from "./admin-auth-profiles.ts";
import { createLogger } from "../functions/logging/logger.ts";
import { adminMemory } from "./admin-memory.ts";
import { adminDeadLetters } from "./admin-dead-letters.ts";
import { adminOverview } from "./admin-overview.ts";
import { adminCompanion } from "./admin-companion.ts";
import { adminSandbox } from "./sandbox-status.ts";
import { adminSubagents } from "./admin-subagents.ts";
import { auditAdminChange } from "./admin-audit-write.ts";
import { channelDefinitions } from "../functions/channels/registry.ts";
import type { ChannelAdminDeps } from "../functions/channels/channel-admin.ts";
import { COMMANDS } from "../functions/commands/registry.ts";
import { adminSessionEvents } from "./admin-session-events.ts";
import { adminExecApprovals } from "./admin-exec-approvals.ts";
import { adminEnv } from "./admin-env.ts";
import { searchSessions } from "../functions/control/session-search.ts";

/**
 * The operator API under /admin (Bearer = gateway token): pairing, allowlist, sessions, agents,
 * config check. Runtime state lives in Postgres and changes only through here (and the CLI that
 * calls it), never by editing the config. Errors are JSON `{ error: { message, type, code } }`.
 */
type AdminContext = Context<{ Bindings: Env }>;

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

function fail(
  c: AdminContext,
  status: 400 | 404 | 409 | 429 | 500 | 502 | 503,
  code: string,
  message: string,
  headers?: Record<string, string>,
) {
  return c.json({ error: { message, type: "admin_error", code } }, status, headers);
}

/** Who is calling, for the approval brute-force guard and the audit trail. */
function actorOf(c: AdminContext): string {
  return c.req.header("cf-connecting-ip")?.trim() || "unknown";
}

async function readJson<T>(
  c: AdminContext,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T } | { ok: false; message: string }> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return { ok: false, message: "body must be JSON" };
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    return {
      ok: false,
      message: parsed.error.issues
        .map((i) => `${i.path.join(".") || "body"}: ${i.message}`)
        .join("; "),
    };
  return { ok: true, value: parsed.data };
}

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

const channelParam = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i);

// ---- pairing --------------------------------------------------------------------------------

admin.get("/pairing/:channel", async (c) => {
  const channel = c.req.param("channel");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const account = c.req.query("account");
  const requests = await withDb(c.env, (db) =>
    postgresAccessStore(db).listPairingRequests(
      channel,
      account ? normalizeAccountId(account) : undefined,
      Date.now(),
    ),
  );
  return c.json({
    channel,
    requests: requests.map((r) => ({
      ...r,
      createdAt: new Date(r.createdAt).toISOString(),
      expiresAt: new Date(r.expiresAt).toISOString(),
    })),
  });
});

const codeBody = z.object({ code: z.string().min(1).max(64) });

for (const action of ["approve", "reject"] as const) {
  admin.post(`/pairing/:channel/${action}`, async (c) => {
    const channel = c.req.param("channel");
    if (!channelParam.safeParse(channel).success)
      return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
    const body = await readJson(c, codeBody);
    if (!body.ok) return fail(c, 400, "invalid_body", body.message);
    const config = configFromEnv(c.env);
    const input = { config, channel, code: body.value.code, actor: actorOf(c), now: Date.now() };
    const result = await withDb(c.env, (db) => {
      const store = postgresAccessStore(db);
      return action === "approve"
        ? approvePairingCode({ ...input, store })
        : rejectPairingCode({ ...input, store });
    });
    if (!result.ok) {
      const headers =
        result.retryAfterMs !== undefined
          ? { "retry-after": String(Math.ceil(result.retryAfterMs / 1000)) }
          : undefined;
      const code =
        result.status === 429
          ? "rate_limited"
          : result.status === 404
            ? "pairing_code_not_found"
            : "invalid_code";
      return fail(c, result.status, code, result.reason, headers);
    }
    const r = result.request;
    return c.json({
      ok: true,
      action,
      channel: r.channel,
      accountId: r.accountId,
      senderId: r.senderId,
      senderName: r.senderName,
      ownerSet: result.ownerSet,
    });
  });
}

// ---- allowlist ------------------------------------------------------------------------------

admin.get("/allowlist/:channel", async (c) => {
  const channel = c.req.param("channel");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const account = c.req.query("account");
  const entries = await withDb(c.env, (db) =>
    postgresAccessStore(db).listApprovedSenders(
      channel,
      account ? normalizeAccountId(account) : undefined,
    ),
  );
  return c.json({
    channel,
    entries: entries.map((e) => ({ ...e, createdAt: new Date(e.createdAt).toISOString() })),
  });
});

const allowBody = z.object({
  senderId: z.string().min(1).max(256),
  accountId: z.string().min(1).optional(),
});

admin.post("/allowlist/:channel", async (c) => {
  const channel = c.req.param("channel");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const body = await readJson(c, allowBody);
  if (!body.ok) return fail(c, 400, "invalid_body", body.message);
  const accountId = normalizeAccountId(body.value.accountId);
  const now = Date.now();
  await withDb(c.env, async (db) => {
    const store = postgresAccessStore(db);
    await store.addApprovedSender(
      { channel, accountId, senderId: body.value.senderId, source: "admin" },
      now,
    );
    await store.audit({
      kind: "allowlist.added",
      actor: actorOf(c),
      detail: { channel, accountId, senderId: body.value.senderId },
      at: now,
    });
  });
  return c.json({ ok: true, channel, accountId, senderId: body.value.senderId }, 201);
});

admin.delete("/allowlist/:channel/:senderId", async (c) => {
  const channel = c.req.param("channel");
  const senderId = c.req.param("senderId");
  if (!channelParam.safeParse(channel).success)
    return fail(c, 400, "invalid_channel", `invalid channel id "${channel}"`);
  const accountId = normalizeAccountId(c.req.query("account"));
  const now = Date.now();
  const removed = await withDb(c.env, async (db) => {
    const store = postgresAccessStore(db);
    const done = await store.removeApprovedSender(channel, accountId, senderId);
    if (done)
      await store.audit({
        kind: "allowlist.removed",
        actor: actorOf(c),
        detail: { channel, accountId, senderId },
        at: now,
      });
    return done;
  });
  if (!removed)
    return fail(
      c,
      404,
      "not_found",
      `${senderId} is not on the ${channel} (${accountId}) allowlist`,
    );
  return c.json({ ok: true, channel, accountId, senderId });
});

// ---- sessions -------------------------------------------------------------------------------

admin.get("/sessions", async (c) => {
  const limit = z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .catch(100)
    .parse(c.req.query("limit") ?? 100);
  // `q`: a fragment of the session key, the channel, or the last message's address / sender id.
  const query = c.req.query("q");
  if (query !== undefined && query.length > 200)
    return fail(c, 400, "invalid_query", "q: at most 200 characters");
  const rows = await withDb(c.env, (db) =>
    searchSessions(db, { query, agentId: c.req.query("agent"), limit }),
  );
  return c.json({ sessions: rows.map(sessionJson) });
});

admin.get("/sessions/:key", async (c) => {
  const key = c.req.param("key");
  const limit = z.coerce
    .number()
    .int()
    .min(1)
    .max(5000)
    .catch(200)
    .parse(c.req.query("limit") ?? 200);
  const found = await withDb(c.env, async (db) => {
    const [row] = await db.select().from(sessions).where(eq(sessions.sessionKey, key)).limit(1);
    if (!row) return undefined;
    const entries = await db
      .select()
      .from(transcriptEntries)
      .where(eq(transcriptEntries.sessionKey, key))
      .orderBy(desc(transcriptEntries.seq))
      .limit(limit);
    return { row, entries: entries.reverse() };
  });
  if (!found) return fail(c, 404, "session_not_found", `no session "${key}"`);
  // The sandbox lives in the SessionDO (its commands, metered time) and, for containers, its SandboxDO.
  const sandbox = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key))
    .sandbox()
    .catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
  return c.json({
    session: sessionJson(found.row),
    sandbox,
    transcript: found.entries.map((e) => ({
      seq: e.seq,
      sessionId: e.sessionId,
      role: e.role,
      content: e.content,
      createdAt: e.createdAt.toISOString(),
    })),
  });
});

admin.post("/sessions/:key/reset", async (c) => {
  const key = c.req.param("key");
  const exists = await withDb(
    c.env,
    async (db) =>
      (
        await db
          .select({ k: sessions.sessionKey })
          .from(sessions)
          .where(eq(sessions.sessionKey, key))
          .limit(1)
      ).length > 0,
  );
  if (!exists) return fail(c, 404, "session_not_found", `no session "${key}"`);
  const stub = c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key));
  try {
    const result = await stub.adminReset();
    await withDb(c.env, (db) =>
      postgresAccessStore(db).audit({
        kind: "session.reset",
        actor: actorOf(c),
        detail: { sessionKey: key },
        at: Date.now(),
      }),
    );
    return c.json({ ok: true, sessionKey: key, result: result ?? null });
  } catch (error) {
    return fail(
      c,
      502,
      "session_reset_failed",
      `session reset failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
});

/** Reply chunks the outbox gave up on, and inbound events that failed triage or run setup for good. */
admin.get("/sessions/:key/dead-letters", async (c) => {
  const key = c.req.param("key");
  const exists = await withDb(
    c.env,
    async (db) =>
      (
        await db
          .select({ k: sessions.sessionKey })
          .from(sessions)
          .where(eq(sessions.sessionKey, key))
          .limit(1)
      ).length > 0,
  );
  if (!exists) return fail(c, 404, "session_not_found", `no session "${key}"`);
  const deadLetters = await c.env.SESSIONS.get(c.env.SESSIONS.idFromName(key)).deadLetters();
  return c.json({ sessionKey: key, deadLetters });
});

function sessionJson(row: typeof sessions.$inferSelect) {
  return {
    sessionKey: row.sessionKey,
    sessionId: row.sessionId,
    agentId: row.agentId,
    channel: row.channel,
    chatType: row.chatType,
    modelOverride: row.modelOverride,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    sessionStartedAt: row.sessionStartedAt.toISOString(),
    lastInteractionAt: row.lastInteractionAt?.toISOString() ?? null,
    updatedAt: row.updatedAt.toISOString(),
  };
}

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
