import { and, desc, eq, lt, ne } from "drizzle-orm";
import { withDb, type DbEnv } from "../db/client.ts";
import { computeEnvInstalls } from "../db/schema.ts";

/**
 * The record of every install, env creation and discipline (compute_env_installs), keyed by what
 * asked for it: the model's tool-call id (`<agent>:<callId>`) or the admin request's id. Written
 * before the first conda command and after each decision, so a call that runs again after a crash
 * reads how far the first got. A row "running" is the lock of its env: one install per env at a
 * time (a partial unique index), until its lease runs out and the next install into that env
 * takes it over (rolls it back first).
 */
export type InstallRow = typeof computeEnvInstalls.$inferSelect;
/** restore: an env brought back to its lock over what it has; recreate: rebuilt from it (restore.ts). */
export type InstallKind = "install" | "create" | "discipline" | "restore" | "recreate";
export type InstallStatus =
  | "planned"
  | "running"
  | "installed"
  | "created"
  | "needs-new-env"
  | "answered"
  | "declined"
  | "refused"
  | "failed"
  | "rolled-back";

/** Statuses after which nothing more happens: a call that finds one returns it. */
export const FINAL_STATUSES: readonly string[] = [
  "installed",
  "created",
  "needs-new-env",
  "answered",
  "declined",
  "refused",
  "failed",
  "rolled-back",
];

export async function getInstall(env: DbEnv, id: string): Promise<InstallRow | undefined> {
  const rows = await withDb(env, (db) =>
    db.select().from(computeEnvInstalls).where(eq(computeEnvInstalls.id, id)).limit(1),
  );
  return rows[0];
}

export interface InstallStart {
  id: string;
  agentId: string;
  kind: InstallKind;
  packages: string[];
  envName?: string;
  description?: string;
  reason?: string;
  requestedBy?: string;
  sessionKey?: string;
}

/** The record of this request: created now ("planned"), or the one a first attempt left. */
export async function beginInstall(env: DbEnv, start: InstallStart): Promise<InstallRow> {
  await withDb(env, (db) =>
    db
      .insert(computeEnvInstalls)
      .values({
        id: start.id,
        agentId: start.agentId,
        kind: start.kind,
        packages: start.packages,
        envName: start.envName ?? null,
        status: "planned",
        description: start.description ?? null,
        reason: start.reason ?? null,
        requestedBy: start.requestedBy ?? null,
        sessionKey: start.sessionKey ?? null,
      })
      .onConflictDoNothing(),
  );
  return (await getInstall(env, start.id))!;
}

export type LockOutcome =
  | { kind: "held" }
  | { kind: "busy"; holder: InstallRow }
  /** A running install whose lease ran out: its env must be rolled back before this one starts. */
  | { kind: "stale"; holder: InstallRow };

/** Takes the env for this install (status running, lease), unless another install holds it. */
export async function lockEnv(
  env: DbEnv,
  id: string,
  agentId: string,
  envName: string,
  leaseMs: number,
): Promise<LockOutcome> {
  const holders = await withDb(env, (db) =>
    db
      .select()
      .from(computeEnvInstalls)
      .where(
        and(
          eq(computeEnvInstalls.agentId, agentId),
          eq(computeEnvInstalls.envName, envName),
          eq(computeEnvInstalls.status, "running"),
          ne(computeEnvInstalls.id, id),
        ),
      )
      .limit(1),
  );
  const holder = holders[0];
  if (holder) {
    const expired = holder.leaseUntil !== null && holder.leaseUntil.getTime() < Date.now();
    return expired ? { kind: "stale", holder } : { kind: "busy", holder };
  }
  try {
    await withDb(env, (db) =>
      db
        .update(computeEnvInstalls)
        .set({ status: "running", envName, leaseUntil: new Date(Date.now() + leaseMs) })
        .where(eq(computeEnvInstalls.id, id)),
    );
  } catch (error) {
    // Lost a race for the partial unique index: whoever won holds the env.
    const again = await lockEnv(env, id, agentId, envName, leaseMs);
    if (again.kind !== "held") return again;
    throw error;
  }
  return { kind: "held" };
}

export async function updateInstall(
  env: DbEnv,
  id: string,
  patch: Partial<Omit<InstallRow, "id" | "agentId">>,
): Promise<void> {
  const final = patch.status && FINAL_STATUSES.includes(patch.status);
  await withDb(env, (db) =>
    db
      .update(computeEnvInstalls)
      .set({ ...patch, ...(final ? { finishedAt: new Date(), leaseUntil: null } : {}) })
      .where(eq(computeEnvInstalls.id, id)),
  );
}

export async function listInstalls(env: DbEnv, agentId: string, limit = 50): Promise<InstallRow[]> {
  return withDb(env, (db) =>
    db
      .select()
      .from(computeEnvInstalls)
      .where(eq(computeEnvInstalls.agentId, agentId))
      .orderBy(desc(computeEnvInstalls.startedAt))
      .limit(limit),
  );
}

/** "Create a new env?" questions nobody has answered yet. */
export async function pendingQuestions(env: DbEnv, agentId: string): Promise<InstallRow[]> {
  return withDb(env, (db) =>
    db
      .select()
      .from(computeEnvInstalls)
      .where(
        and(
          eq(computeEnvInstalls.agentId, agentId),
          eq(computeEnvInstalls.status, "needs-new-env"),
        ),
      )
      .orderBy(desc(computeEnvInstalls.startedAt))
      .limit(20),
  );
}

/** Running installs whose lease ran out (their caller died for good): recovered by the next status. */
export async function staleInstalls(env: DbEnv, agentId: string): Promise<InstallRow[]> {
  return withDb(env, (db) =>
    db
      .select()
      .from(computeEnvInstalls)
      .where(
        and(
          eq(computeEnvInstalls.agentId, agentId),
          eq(computeEnvInstalls.status, "running"),
          lt(computeEnvInstalls.leaseUntil, new Date()),
        ),
      ),
  );
}
