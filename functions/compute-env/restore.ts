import * as conda from "./conda-cli.ts";
import { beginInstall, FINAL_STATUSES, updateInstall, type InstallRow } from "./installs.ts";
import type { ManifestEnv } from "./manifest.ts";
import { shellQuote } from "./wrap.ts";
import { egressProblem } from "./egress.ts";
import {
  commands,
  done,
  nv,
  refreshFromSandbox,
  rollBack,
  takeEnv,
  type CascadeDeps,
} from "./steps.ts";

/**
 * Envs recreated from their lock when a sandbox comes back without them. A container starts from
 * its image: the primary env as built, none of the auxiliary envs the cascade created since, none
 * of the packages installed since. The manifest keeps each env's explicit lock (`conda list
 * --explicit --md5` after every change); before the first wrapped command (and before an install,
 * a create or a status) one shell command — no conda — lists what each registered env holds, and
 * an env that lacks packages its lock names is rebuilt from the lock: `conda create -n <env> --file
 * <lock>` when it is gone, `conda install -n <env> --file <lock>` over it when it is there but
 * behind (packages it has beyond the lock stay). An explicit file is linked as listed: no solve,
 * the same builds as before. Each restore is a record of its own (kind "restore"), keyed by the
 * request that found the env missing, and holds the env's lock while it runs, like an install; a
 * create that fails removes the half-made env, an install that fails is rolled back.
 */
export interface RestoreNote {
  env: string;
  row: InstallRow;
}

/**
 * One section per registered env with a lock: `@@env <name>`, then, when the env exists, `@@present`
 * and the dists its conda-meta holds. An env counts where conda keeps it: under the configured
 * prefix, or under AcaClaw's own Miniforge (~/.acaclaw/miniforge3), which detection looks at first.
 */
export function presenceScript(condaPrefix: string, envs: readonly string[]): string {
  return envs
    .map((name) => {
      const metas = [
        shellQuote(`${condaPrefix}/envs/${name}/conda-meta`),
        `"$HOME/.acaclaw/miniforge3/envs/"${shellQuote(name)}/conda-meta`,
      ].join(" ");
      return `echo ${shellQuote(`@@env ${name}`)}; for m in ${metas}; do if [ -d "$m" ]; then echo @@present; ls "$m" | sed -n 's/\\.json$//p'; break; fi; done`;
    })
    .join("\n");
}

export function parsePresence(output: string): Map<string, { present: boolean; dists: string[] }> {
  const found = new Map<string, { present: boolean; dists: string[] }>();
  let current: { present: boolean; dists: string[] } | undefined;
  for (const line of output.split("\n").map((l) => l.trim())) {
    if (line.startsWith("@@env ")) {
      current = { present: false, dists: [] };
      found.set(line.slice(6), current);
    } else if (line === "@@present" && current) current.present = true;
    else if (line && current) current.dists.push(line);
  }
  return found;
}

/** The dists of the lock that the env does not hold now (all of them when the env is gone). */
export function missingDists(lock: string, held: readonly string[]): string[] {
  const have = new Set(held);
  return conda.lockDists(lock).filter((d) => !have.has(d));
}

export async function restoreEnvs(
  deps: CascadeDeps,
  stepId: string,
  envs: readonly ManifestEnv[],
): Promise<RestoreNote[]> {
  const locked = envs.filter((e) => e.explicitLock);
  if (!locked.length) return [];
  const check = await deps.runner.run(
    `${stepId}.envs-present`,
    presenceScript(
      deps.config.condaPrefix,
      locked.map((e) => e.name),
    ),
    { timeoutSeconds: 60 },
  );
  // A sandbox that cannot say is not a reason to rebuild anything: the command runs as it would.
  if (check.state !== "exited" || check.exitCode !== 0) return [];
  const presence = parsePresence(check.output);
  const notes: RestoreNote[] = [];
  for (const e of locked) {
    const seen = presence.get(e.name);
    if (!seen) continue;
    const missing = missingDists(e.explicitLock!, seen.dists);
    if (!missing.length) continue;
    notes.push({
      env: e.name,
      row: await restoreEnv(deps, `${stepId}.restore.${e.name}`, e, seen.present, missing),
    });
  }
  return notes;
}

async function restoreEnv(
  deps: CascadeDeps,
  id: string,
  e: ManifestEnv,
  present: boolean,
  missing: string[],
): Promise<InstallRow> {
  const row = await beginInstall(deps.db, {
    id,
    agentId: deps.agentId,
    kind: present ? "restore" : "recreate",
    packages: missing.slice(0, 50),
    envName: e.name,
    reason: present
      ? `${e.name} lacks ${missing.length} package(s) of its lock in this sandbox`
      : `${e.name} is missing from this sandbox`,
  });
  if (FINAL_STATUSES.includes(row.status)) return row;
  let lock: string;
  try {
    lock = conda.checkLock(e.explicitLock!);
  } catch (error) {
    return done(deps, id, { status: "refused", error: (error as Error).message });
  }
  const channels = [...new Set(conda.lockUrls(lock).map(conda.urlChannel))];
  const egress = egressProblem(channels, deps.runner.network);
  if (egress)
    return done(deps, id, {
      status: "refused",
      error: egress.replace("installs reach", "its lock's packages are on"),
    });
  const held = await takeEnv(deps, id, e.name);
  if (held) return done(deps, id, { status: "refused", error: held });
  let revision: number | null = null;
  if (present) {
    const revs = await deps.runner.run(`${id}.rev`, conda.revisions(commands(deps), e.name), {
      timeoutSeconds: 120,
    });
    revision = conda.parseLastRevision(revs.output) ?? null;
    await updateInstall(deps.db, id, { revisionBefore: revision });
  }
  const verb = present ? "install" : "create";
  const run = await deps.runner.run(
    `${id}.${verb}`,
    conda.fromLock(commands(deps), verb, e.name, lock),
    { network: channels.some((c) => !c.startsWith("file:")) },
  );
  const outcome = conda.parseSolve(run.output, run.exitCode);
  if (run.state === "exited" && run.exitCode === 0 && outcome.kind === "ok") {
    await refreshFromSandbox(deps, `${id}.list`, e.name);
    return done(deps, id, {
      status: "installed",
      changes: { link: outcome.link.map(nv), unlink: outcome.unlink.map(nv) },
    });
  }
  const why = run.timedOut
    ? `it ran past agents.defaults.computeEnv.installTimeoutSeconds (${deps.config.installTimeoutSeconds} s)`
    : `conda failed (${run.state === "exited" ? `exit ${run.exitCode}` : run.state}): ${outcome.kind === "ok" ? "" : outcome.message}`;
  if (present) return rollBack(deps, id, e.name, revision, `recreating from its lock: ${why}`, []);
  await deps.runner.run(`${id}.remove`, conda.removeEnv(commands(deps), e.name), {
    timeoutSeconds: 300,
  });
  return done(deps, id, {
    status: "failed",
    error: `recreating ${e.name} from its lock failed: ${why}; the half-made env was removed`,
  });
}

/** What the model and the operator read about a restore. */
export function describeRestore(note: RestoreNote): string {
  const { env, row } = note;
  if (row.status === "installed")
    return `${env} was ${row.kind === "recreate" ? "missing from this sandbox and was recreated" : "behind its lock in this sandbox and was brought back"} from its lock (${row.changes?.link.length ?? 0} packages linked)`;
  return `${env} is not as the manifest says in this sandbox and could not be recreated from its lock: ${row.error ?? row.status}`;
}
