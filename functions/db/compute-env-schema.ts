import { sql } from "drizzle-orm";
import {
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
 * AcaClaw's computing environment (functions/compute-env/): the env manifest per agent — AcaClaw's
 * `env-manifest.json` as rows, exported in that shape — and the record of every install, create and
 * question of the install cascade.
 */

/** One registered conda env of an agent: its manifest entry, plus the packages it was last seen with. */
export const computeEnvs = pgTable(
  "compute_envs",
  {
    agentId: text("agent_id").notNull(),
    name: text("name").notNull(),
    /** "primary" (the agent's default env) or "auxiliary" (created by the cascade or by hand). */
    type: text("type").notNull(),
    description: text("description").notNull().default(""),
    pythonVersion: text("python_version"),
    rVersion: text("r_version"),
    /** Package name → version, from the env's own `conda list --json` after every change. */
    packages: jsonb("packages").$type<Record<string, string>>().notNull().default({}),
    /**
     * The env's explicit lock (`conda list --explicit --md5`) after its last change: what a fresh
     * sandbox recreates it from (compute-env/restore.ts). Null until first listed.
     */
    explicitLock: text("explicit_lock"),
    /** Disciplines merged into it (primary env). */
    disciplines: jsonb("disciplines").$type<string[]>().notNull().default([]),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    createdReason: text("created_reason"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.name] })],
);

/**
 * One install, env creation, discipline or R install, keyed by what asked for it (the model's
 * tool-call id, or the admin request's id): written before the first conda command and updated after
 * each step, so a resumed call reads it instead of running again. A row "running" holds its env: at
 * most one per (agent, env) — the partial unique index is the lock — until its lease runs out.
 */
export const computeEnvInstalls = pgTable(
  "compute_env_installs",
  {
    id: text("id").primaryKey(),
    agentId: text("agent_id").notNull(),
    /** install | create | discipline | restore | recreate (restore.ts) */
    kind: text("kind").notNull(),
    packages: jsonb("packages").$type<string[]>().notNull(),
    /** The env being changed while running; the env it went to when done. */
    envName: text("env_name"),
    /** running | installed | created | needs-new-env | answered | declined | refused | failed | rolled-back */
    status: text("status").notNull(),
    /** Each dry-run of the cascade: env, whether it solved, the solver's message. */
    tried: jsonb("tried")
      .$type<Array<{ env: string; ok: boolean; message: string }>>()
      .notNull()
      .default([]),
    /** What the install linked and unlinked (name, version), from conda's own answer. */
    changes: jsonb("changes").$type<{
      link: Array<{ name: string; version: string }>;
      unlink: Array<{ name: string; version: string }>;
    }>(),
    /** The env's conda revision before the change: what a failed or interrupted install rolls back to. */
    revisionBefore: integer("revision_before"),
    /** For needs-new-env: the env the user is asked to create. */
    proposal: jsonb("proposal").$type<{ name: string; packages: string[]; reason: string }>(),
    description: text("description"),
    reason: text("reason"),
    error: text("error"),
    requestedBy: text("requested_by"),
    sessionKey: text("session_key"),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    /** A running row older than this is taken over (rolled back) by the next install into its env. */
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
  },
  (t) => [
    index("compute_env_installs_agent_idx").on(t.agentId, t.startedAt),
    uniqueIndex("compute_env_installs_running_idx")
      .on(t.agentId, t.envName)
      .where(sql`status = 'running'`),
  ],
);
