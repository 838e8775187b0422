import type { EdgeclawConfig } from "../config/schema.ts";
import type { DbEnv } from "../db/client.ts";
import { mainSessionKey } from "../routing/session-key.ts";
import { computeEnvFor } from "./config.ts";
import {
  ensureManifest,
  installPackages,
  recoverStale,
  refreshFromSandbox,
  type CascadeDeps,
} from "./cascade.ts";
import { createEnv } from "./create-env.ts";
import { detect, rStatus, type RStatus } from "./detect.ts";
import { DISCIPLINES, disciplineById, disciplinePackages } from "./disciplines.ts";
import {
  listInstalls,
  pendingQuestions,
  staleInstalls,
  updateInstall,
  type InstallRow,
} from "./installs.ts";
import {
  exportManifest,
  loadManifest,
  refreshPackages,
  type EnvManifestJson,
  type ManifestEnv,
} from "./manifest.ts";
import { restoreEnvs } from "./restore.ts";
import { sandboxRunner } from "./runner.ts";

/**
 * What operators do with an agent's computing environment (`npx edgeclaw env …`, the control
 * page's Environments view, /admin/env): status with detection and R, packages, disciplines,
 * installs and new envs through the same cascade the model uses. Commands run in the sandbox of
 * the agent's main session, each request keyed by its own id.
 */
export class ComputeEnvUnavailable extends Error {}

export function operatorDeps(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  agentId: string,
): CascadeDeps {
  const computeEnv = computeEnvFor(config, agentId);
  if (!computeEnv)
    throw new ComputeEnvUnavailable(
      `agent "${agentId}" has no computing environment: set agents.defaults.computeEnv.enabled (or agents.list[].computeEnv) and a sandbox backend`,
    );
  return {
    db: env as DbEnv,
    runner: sandboxRunner(config, env, agentId, mainSessionKey(agentId), computeEnv),
    config: computeEnv,
    agentId,
  };
}

export interface EnvStatus {
  agentId: string;
  manifest: EnvManifestJson;
  envs: ManifestEnv[];
  conda: { exe: string | null; source: string | null };
  /** Envs conda has that the manifest does not register (a host conda's own envs). */
  unregistered: string[];
  r: RStatus;
  questions: InstallRow[];
  installs: InstallRow[];
}

export async function envStatus(deps: CascadeDeps, requestId: string): Promise<EnvStatus> {
  for (const stale of await staleInstalls(deps.db, deps.agentId)) await recoverStale(deps, stale);
  const envs = await ensureManifest(deps, `${requestId}.ensure`);
  const restored = await restoreEnvs(deps, requestId, envs);
  const current = restored.length ? await loadManifest(deps.db, deps.agentId) : envs;
  const found = await detect(deps.runner, deps.config, `${requestId}.detect`);
  // The manifest stays true: packages as conda lists them now, and an env changed behind the
  // cascade's back (a `conda install` by hand) gets its lock listed again too.
  for (const e of current) {
    const now = found.envs.find((f) => f.name === e.name);
    if (!now || !Object.keys(now.packages).length) continue;
    if (samePackages(now.packages, e.packages) && e.explicitLock) continue;
    await refreshFromSandbox(deps, `${requestId}.relist.${e.name}`, e.name);
  }
  const fresh = await loadManifest(deps.db, deps.agentId);
  return {
    agentId: deps.agentId,
    manifest: exportManifest(fresh, deps.config.primary),
    envs: fresh,
    conda: { exe: found.condaExe, source: found.source },
    unregistered: found.envs
      .map((e) => e.name)
      .filter((n) => n !== "base" && !fresh.some((e) => e.name === n)),
    r: rStatus(
      fresh.find((e) => e.type === "primary"),
      found.systemR,
    ),
    questions: await pendingQuestions(deps.db, deps.agentId),
    installs: await listInstalls(deps.db, deps.agentId, 50),
  };
}

function samePackages(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

export function disciplineList(deps: CascadeDeps | undefined, envs: readonly ManifestEnv[]) {
  const chosen = new Set(
    envs.find((e) => e.type === "primary")?.disciplines ?? deps?.config.disciplines ?? [],
  );
  return DISCIPLINES.map((d) => ({ ...d, added: chosen.has(d.id) }));
}

/** Stage 2: a discipline's essential packages into the primary env (with R when asked), then recorded on it. */
export async function addDiscipline(
  deps: CascadeDeps,
  request: { id: string; discipline: string; withR: boolean; requestedBy: string },
): Promise<InstallRow> {
  const discipline = disciplineById(request.discipline);
  if (!discipline)
    throw new ComputeEnvUnavailable(
      `no discipline "${request.discipline}": one of ${DISCIPLINES.map((d) => d.id).join(", ")}`,
    );
  const row = await installPackages(deps, {
    id: request.id,
    kind: "discipline",
    packages: disciplinePackages([discipline.id], request.withR),
    envName: deps.config.primary,
    reason: `discipline ${discipline.id}`,
    requestedBy: request.requestedBy,
  });
  if (row.status === "installed") {
    const primary = (await loadManifest(deps.db, deps.agentId)).find((e) => e.type === "primary");
    if (primary && !primary.disciplines.includes(discipline.id)) {
      const disciplines = [...primary.disciplines, discipline.id];
      const labels = disciplines.map((id) => disciplineById(id)?.label ?? id);
      await refreshPackages(deps.db, deps.agentId, primary.name, primary.packages, {
        disciplines,
        description: ["Base scientific environment", ...labels].join(" + "),
      });
    }
  }
  return row;
}

export { createEnv, installPackages };

export async function declineQuestion(deps: CascadeDeps, id: string): Promise<boolean> {
  const open = (await pendingQuestions(deps.db, deps.agentId)).find((q) => q.id === id);
  if (!open) return false;
  await updateInstall(deps.db, id, { status: "declined" });
  return true;
}
