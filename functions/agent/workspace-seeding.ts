import { eq } from "drizzle-orm";
import { workspaceSeedFor } from "../config/bundled-workspace.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { withDb, type DbEnv } from "../db/client.ts";
import { gatewayState, workspaceFiles } from "../db/schema.ts";
import { assertContentSize, normalizeWorkspacePath } from "./workspace.ts";

/**
 * The first use of an agent's workspace: the bundled seed files copied in once, and BOOTSTRAP.md
 * (the first-run ritual) never again once a workspace was seeded. Apart from the file store
 * (workspace.ts), which every tool reads and writes through, because only the prompt loader seeds
 * and seeding has its own rule (a marker in gateway_state, not a file) that the store knows nothing of.
 */

/** The seed file OpenClaw creates only for a brand-new workspace, and never re-creates. */
export const FIRST_RUN_FILE = "BOOTSTRAP.md";

export interface SeedOptions {
  /** `agents.defaults.skipBootstrap`: the operator manages the workspace; create nothing. */
  skipBootstrap?: boolean;
}

export interface SeedResult {
  /** Files this call inserted (empty when the workspace already had files). */
  seeded: string[];
  /** True when the workspace had no files before this call and had never been seeded. */
  fresh: boolean;
}

function seededMarkerKey(agentId: string): string {
  return `workspace.seeded:${agentId}`;
}

/**
 * Copies the bundled seed files into an agent's workspace the first time it is used. Idempotent
 * and safe under concurrency: rows are inserted with `on conflict do nothing`, and a workspace that
 * already holds any file is left alone. A marker in gateway_state remembers that the workspace was
 * seeded, so if it is later emptied the other files come back but BOOTSTRAP.md (the one-time
 * first-run ritual) is never silently re-seeded — the docs' rule for an attested workspace.
 */
export async function ensureWorkspaceSeeded(
  env: DbEnv,
  agentId: string,
  seed: Readonly<Record<string, string>>,
  options: SeedOptions = {},
): Promise<SeedResult> {
  if (options.skipBootstrap) return { seeded: [], fresh: false };
  const files = Object.entries(seed).map(([path, content]) => {
    const normalized = normalizeWorkspacePath(path);
    assertContentSize(normalized, content);
    return { path: normalized, content };
  });

  return withDb(env, async (db) => {
    const existing = await db
      .select({ path: workspaceFiles.path })
      .from(workspaceFiles)
      .where(eq(workspaceFiles.agentId, agentId))
      .limit(1);
    if (existing.length > 0) return { seeded: [], fresh: false };

    const marker = await db
      .select({ key: gatewayState.key })
      .from(gatewayState)
      .where(eq(gatewayState.key, seededMarkerKey(agentId)));
    const previouslySeeded = marker.length > 0;
    const toInsert = previouslySeeded
      ? files.filter((file) => file.path !== FIRST_RUN_FILE)
      : files;

    const inserted =
      toInsert.length === 0
        ? []
        : await db
            .insert(workspaceFiles)
            .values(
              toInsert.map((file) => ({
                agentId,
                path: file.path,
                content: file.content,
                version: 1,
              })),
            )
            .onConflictDoNothing()
            .returning({ path: workspaceFiles.path });
    await db
      .insert(gatewayState)
      .values({ key: seededMarkerKey(agentId), value: { seededAt: new Date().toISOString() } })
      .onConflictDoNothing();
    return { seeded: inserted.map((row) => row.path).sort(), fresh: !previouslySeeded };
  });
}

/** Agents whose workspace this isolate has already seen seeded, so a run costs no extra query. */
const seededInIsolate = new Set<string>();

/**
 * Seeds `agentId` from the bundled workspace (its own folder, else the shared one) the first time
 * this isolate sees it, honouring `agents.defaults.skipBootstrap`.
 */
export async function ensureAgentWorkspace(
  env: DbEnv,
  config: EdgeclawConfig,
  agentId: string,
): Promise<SeedResult> {
  if (seededInIsolate.has(agentId)) return { seeded: [], fresh: false };
  const result = await ensureWorkspaceSeeded(env, agentId, workspaceSeedFor(agentId), {
    skipBootstrap: config.agents.defaults.skipBootstrap,
  });
  seededInIsolate.add(agentId);
  return result;
}
