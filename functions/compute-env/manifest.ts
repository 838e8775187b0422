import { and, asc, eq } from "drizzle-orm";
import { withDb, type DbEnv } from "../db/client.ts";
import { computeEnvs } from "../db/schema.ts";

/**
 * The env manifest of one agent, kept in Postgres (compute_envs): AcaClaw's env-manifest.json as
 * rows. The packages of an env are never what an install planned but what the env's own
 * `conda list --json` said after the change (or after a rollback), so the manifest stays true
 * whatever happened in between.
 */
export interface ManifestEnv {
  name: string;
  type: "primary" | "auxiliary";
  description: string;
  pythonVersion: string | null;
  rVersion: string | null;
  packages: Record<string, string>;
  /** Its explicit lock after the last change (what a fresh sandbox rebuilds it from), if listed. */
  explicitLock: string | null;
  disciplines: string[];
  createdAt: string;
  createdReason: string | null;
  updatedAt: string;
}

/** AcaClaw's env-manifest.json, as `npx edgeclaw env status --json` and the admin API export it. */
export interface EnvManifestJson {
  environments: Record<
    string,
    {
      type: "primary" | "auxiliary";
      description: string;
      pythonVersion?: string;
      rVersion?: string;
      createdAt: string;
      createdReason?: string;
    }
  >;
  defaultEnv: string;
}

/** Primary first, then auxiliaries in the order they were created: the cascade's order. */
export async function loadManifest(env: DbEnv, agentId: string): Promise<ManifestEnv[]> {
  const rows = await withDb(env, (db) =>
    db
      .select()
      .from(computeEnvs)
      .where(eq(computeEnvs.agentId, agentId))
      .orderBy(asc(computeEnvs.createdAt), asc(computeEnvs.name)),
  );
  const envs = rows.map(
    (row): ManifestEnv => ({
      name: row.name,
      type: row.type === "primary" ? "primary" : "auxiliary",
      description: row.description,
      pythonVersion: row.pythonVersion,
      rVersion: row.rVersion,
      packages: row.packages,
      explicitLock: row.explicitLock,
      disciplines: row.disciplines,
      createdAt: row.createdAt.toISOString(),
      createdReason: row.createdReason,
      updatedAt: row.updatedAt.toISOString(),
    }),
  );
  return [...envs.filter((e) => e.type === "primary"), ...envs.filter((e) => e.type !== "primary")];
}

export function exportManifest(envs: readonly ManifestEnv[], defaultEnv: string): EnvManifestJson {
  const environments: EnvManifestJson["environments"] = {};
  for (const e of envs)
    environments[e.name] = {
      type: e.type,
      description: e.description,
      ...(e.pythonVersion ? { pythonVersion: e.pythonVersion } : {}),
      ...(e.rVersion ? { rVersion: e.rVersion } : {}),
      createdAt: e.createdAt,
      ...(e.createdReason ? { createdReason: e.createdReason } : {}),
    };
  return { environments, defaultEnv };
}

export interface EnvRegistration {
  name: string;
  type: "primary" | "auxiliary";
  description: string;
  createdReason?: string | null;
  packages: Record<string, string>;
  explicitLock?: string | null;
  disciplines?: string[];
}

/** Python and R versions as the manifest shows them, from the env's packages. */
export function versionsOf(packages: Record<string, string>): {
  pythonVersion: string | null;
  rVersion: string | null;
} {
  return { pythonVersion: packages.python ?? null, rVersion: packages["r-base"] ?? null };
}

/** Registers an env, or refreshes its packages when it is already registered (description kept). */
export async function registerEnv(
  env: DbEnv,
  agentId: string,
  entry: EnvRegistration,
): Promise<void> {
  const now = new Date();
  await withDb(env, (db) =>
    db
      .insert(computeEnvs)
      .values({
        agentId,
        name: entry.name,
        type: entry.type,
        description: entry.description,
        createdReason: entry.createdReason ?? null,
        packages: entry.packages,
        explicitLock: entry.explicitLock ?? null,
        disciplines: entry.disciplines ?? [],
        ...versionsOf(entry.packages),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoUpdate({
        target: [computeEnvs.agentId, computeEnvs.name],
        set: {
          packages: entry.packages,
          ...(entry.explicitLock ? { explicitLock: entry.explicitLock } : {}),
          ...versionsOf(entry.packages),
          updatedAt: now,
        },
      }),
  );
}

/**
 * What the env holds now (its `conda list`, and its explicit lock when listed), after an install,
 * a rollback, a restore or a detection.
 */
export async function refreshPackages(
  env: DbEnv,
  agentId: string,
  name: string,
  packages: Record<string, string>,
  change: { disciplines?: string[]; description?: string; explicitLock?: string | null } = {},
): Promise<void> {
  const { explicitLock, ...rest } = change;
  await withDb(env, (db) =>
    db
      .update(computeEnvs)
      .set({
        packages,
        ...versionsOf(packages),
        updatedAt: new Date(),
        ...rest,
        ...(explicitLock ? { explicitLock } : {}),
      })
      .where(and(eq(computeEnvs.agentId, agentId), eq(computeEnvs.name, name))),
  );
}

/** Forgets an env that no longer exists in the sandbox (never the primary). */
export async function unregisterEnv(env: DbEnv, agentId: string, name: string): Promise<void> {
  await withDb(env, (db) =>
    db
      .delete(computeEnvs)
      .where(
        and(
          eq(computeEnvs.agentId, agentId),
          eq(computeEnvs.name, name),
          eq(computeEnvs.type, "auxiliary"),
        ),
      ),
  );
}
