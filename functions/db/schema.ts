import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

/**
 * Postgres holds what outlives one conversation or must be queried across them. The hot path (the
 * ack of a platform event) never touches it: SessionDO's own SQLite is the source of truth for a live
 * session, and mirrors into these tables in batches.
 */

/** One row per session key: the session index OpenClaw keeps in sessions.json. */
export const sessions = pgTable(
  "sessions",
  {
    sessionKey: text("session_key").primaryKey(),
    sessionId: text("session_id").notNull(),
    agentId: text("agent_id").notNull(),
    channel: text("channel"),
    chatType: text("chat_type"),
    lastRoute: jsonb("last_route"),
    modelOverride: text("model_override"),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
    sessionStartedAt: timestamp("session_started_at", { withTimezone: true }).notNull(),
    lastInteractionAt: timestamp("last_interaction_at", { withTimezone: true }),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("sessions_agent_idx").on(t.agentId, t.updatedAt)],
);

/** Archived transcript entries, mirrored from each SessionDO (seq is the DO's own sequence). */
export const transcriptEntries = pgTable(
  "transcript_entries",
  {
    sessionKey: text("session_key").notNull(),
    sessionId: text("session_id").notNull(),
    seq: integer("seq").notNull(),
    role: text("role").notNull(),
    content: jsonb("content").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.sessionKey, t.seq] }),
    index("transcript_session_idx").on(t.sessionId, t.seq),
  ],
);

/** Tokens and cost per run. */
export const usage = pgTable(
  "usage",
  {
    runId: text("run_id").primaryKey(),
    sessionKey: text("session_key").notNull(),
    agentId: text("agent_id").notNull(),
    model: text("model").notNull(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    cacheReadTokens: integer("cache_read_tokens").notNull().default(0),
    cacheWriteTokens: integer("cache_write_tokens").notNull().default(0),
    costUsd: text("cost_usd").notNull().default("0"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("usage_session_idx").on(t.sessionKey, t.createdAt)],
);

/**
 * One row per model call (every kind: turn, compaction, memory flush, heartbeat, cron, …), written
 * first in the SessionDO (durable-objects/session/upkeep/metering.ts) and mirrored here in batches. The
 * spend an operator sees (/admin/budgets, metrics, the control page) is summed from this table;
 * `cost_usd` is the price from `models.providers.*.models[].cost` at the time of the call.
 */
export const modelCalls = pgTable(
  "model_calls",
  {
    id: text("id").primaryKey(),
    runId: text("run_id"),
    sessionKey: text("session_key").notNull(),
    sessionId: text("session_id").notNull(),
    agentId: text("agent_id").notNull(),
    channel: text("channel"),
    senderId: text("sender_id"),
    /** turn | compaction | silent | memory_flush | heartbeat | cron | … (the caller names it). */
    kind: text("kind").notNull(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    cacheReadTokens: integer("cache_read_tokens").notNull().default(0),
    cacheWriteTokens: integer("cache_write_tokens").notNull().default(0),
    costUsd: doublePrecision("cost_usd").notNull().default(0),
    /** ok | error (a failed attempt is metered too: it may have been billed for its input). */
    outcome: text("outcome").notNull().default("ok"),
    durationMs: integer("duration_ms").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    index("model_calls_time_idx").on(t.createdAt),
    index("model_calls_agent_idx").on(t.agentId, t.createdAt),
    index("model_calls_session_idx").on(t.sessionKey, t.createdAt),
  ],
);

/**
 * Estimated platform cost per run (Cloudflare Worker/Durable Object requests and duration, Postgres
 * compute), from the price table in functions/agent/platform-cost.ts. An estimate, not a bill.
 */
export const runPlatformCost = pgTable(
  "run_platform_cost",
  {
    runId: text("run_id").primaryKey(),
    sessionKey: text("session_key").notNull(),
    agentId: text("agent_id").notNull(),
    channel: text("channel"),
    workerRequests: integer("worker_requests").notNull().default(0),
    doRequests: integer("do_requests").notNull().default(0),
    doGbSeconds: doublePrecision("do_gb_seconds").notNull().default(0),
    postgresQueries: integer("postgres_queries").notNull().default(0),
    estimatedUsd: doublePrecision("estimated_usd").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("run_platform_cost_time_idx").on(t.createdAt)],
);

/** The agent's "disk": bootstrap files and memory notes, versioned for optimistic writes. */
export const workspaceFiles = pgTable(
  "workspace_files",
  {
    agentId: text("agent_id").notNull(),
    path: text("path").notNull(),
    content: text("content").notNull(),
    version: integer("version").notNull().default(1),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.path] })],
);

/** Pending pairing codes for unknown DM senders (channels/pairing). */
export const pairingRequests = pgTable(
  "pairing_requests",
  {
    channel: text("channel").notNull(),
    accountId: text("account_id").notNull(),
    senderId: text("sender_id").notNull(),
    code: text("code").notNull(),
    senderName: text("sender_name"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    /** Dedup key of the event that created the request: a retry of that event re-derives its reply. */
    originKey: text("origin_key"),
  },
  (t) => [
    primaryKey({ columns: [t.channel, t.accountId, t.senderId] }),
    uniqueIndex("pairing_code_idx").on(t.channel, t.code),
  ],
);

/** Senders allowed by approval (pairing) or by the admin API, on top of the config's allowFrom. */
export const allowEntries = pgTable(
  "allow_entries",
  {
    channel: text("channel").notNull(),
    accountId: text("account_id").notNull(),
    senderId: text("sender_id").notNull(),
    source: text("source").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.channel, t.accountId, t.senderId] })],
);

/** Runtime settings that are not config: the owner learned from the first approval, etc. */
export const gatewayState = pgTable("gateway_state", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * The audit trail: security-relevant actions (pairing approvals and rejections, allowlist changes,
 * failed-auth lockouts, admin resets, budget overrides) and reliability events (dead letters).
 * `kind` is the action ("pairing.approved", "auth.lockout", …), `target` what it acted on (a sender,
 * a session key, a budget scope). Written by functions/db/audit.ts; listed by GET /admin/audit.
 */
export const auditEvents = pgTable(
  "audit_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    kind: text("kind").notNull(),
    actor: text("actor"),
    target: text("target"),
    detail: jsonb("detail").notNull().default(sql`'{}'::jsonb`),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("audit_kind_idx").on(t.kind, t.createdAt),
    index("audit_created_idx").on(t.createdAt),
  ],
);

/**
 * Scheduled jobs (automation/cron-jobs). `next_run_at` is the one column the scheduler Durable
 * Object reads to arm its single alarm; null means nothing is due (a fired one-shot, a disabled job).
 */
export const cronJobs = pgTable(
  "cron_jobs",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    name: text("name").notNull(),
    enabled: integer("enabled").notNull().default(1),
    /** {kind:"at",atMs} | {kind:"every",everyMs,anchorMs} | {kind:"cron",expr,tz} */
    schedule: jsonb("schedule").notNull(),
    /** "main" (a system event into the main session) or "isolated" (a run in cron:<id>). */
    sessionTarget: text("session_target").notNull(),
    /** {kind:"systemEvent",text} | {kind:"agentTurn",message,model?,timeoutSeconds?} */
    payload: jsonb("payload").notNull(),
    /** {mode:"none"} | {mode:"announce",channel,to,accountId?,threadId?} */
    delivery: jsonb("delivery").notNull(),
    wakeMode: text("wake_mode").notNull().default("next-heartbeat"),
    deleteAfterRun: integer("delete_after_run").notNull().default(0),
    nextRunAt: timestamp("next_run_at", { withTimezone: true }),
    lastRunAt: timestamp("last_run_at", { withTimezone: true }),
    lastStatus: text("last_status"),
    /** Scheduled (not manual) runs that ended in error since the last success or re-enable. */
    consecutiveErrors: integer("consecutive_errors").notNull().default(0),
    /** Why the scheduler turned the job off ("consecutive-failures"); cleared when it is enabled again. */
    disabledReason: text("disabled_reason"),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("cron_jobs_due_idx").on(t.nextRunAt), index("cron_jobs_agent_idx").on(t.agentId)],
);

/**
 * One row per firing. The id is derived from the job and the moment it was due, so a claim that
 * is repeated (a retried alarm, a crash before dispatch) finds its own row instead of adding one.
 */
export const cronRuns = pgTable(
  "cron_runs",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull(),
    agentId: text("agent_id").notNull(),
    /** claimed → dispatched → ok | error | skipped */
    status: text("status").notNull(),
    scheduledFor: timestamp("scheduled_for", { withTimezone: true }).notNull(),
    sessionKey: text("session_key").notNull(),
    manual: integer("manual").notNull().default(0),
    dispatchedAt: timestamp("dispatched_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    model: text("model"),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    costUsd: text("cost_usd").notNull().default("0"),
    summary: text("summary"),
    error: text("error"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("cron_runs_job_idx").on(t.jobId, t.createdAt),
    index("cron_runs_status_idx").on(t.status),
  ],
);

/**
 * Commands an agent may run without asking again: `/approve <id> allow-always` stores each segment
 * of the approved command (functions/sandbox/trusted-commands.ts), bound to its exact text as
 * OpenClaw's generated entries are bound to their argv. Consulted under tools.exec.security
 * "allowlist" beside tools.exec.allowlist; never under ask "always". Revoked with
 * `edgeclaw approvals revoke` (DELETE /admin/exec-approvals/:id).
 */
export const execApprovals = pgTable(
  "exec_approvals",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    /** One pipeline segment, whitespace normalised ("git status --short"). */
    segment: text("segment").notNull(),
    /** Its executable (argv[0]), for the list. */
    executable: text("executable").notNull(),
    source: text("source").notNull().default("allow-always"),
    approvedBy: text("approved_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("exec_approvals_segment_idx").on(t.agentId, t.segment)],
);

export { memoryChunks, memoryFiles } from "./memory-schema.ts";
export { computeEnvInstalls, computeEnvs } from "./compute-env-schema.ts";
