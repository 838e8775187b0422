import type { ComputeEnvConfig } from "../config/compute-env-schema.ts";
import type { DbEnv } from "../db/client.ts";
import * as conda from "./conda-cli.ts";
import { getInstall, lockEnv, updateInstall, type InstallRow } from "./installs.ts";
import { refreshPackages } from "./manifest.ts";
import type { CondaRunner } from "./runner.ts";

/**
 * The steps every change of an env is made of (the cascade's installs, new envs, rebuilds from a
 * lock): the conda commands' settings, what an env holds now (packages and explicit lock), the
 * record's final write, the env's lock (one change per env at a time) and the rollback of a change
 * that failed or was cut off.
 */
export interface CascadeDeps {
  db: DbEnv;
  runner: CondaRunner;
  config: ComputeEnvConfig;
  agentId: string;
}

const SLACK_MS = 120_000;

export function commands(deps: CascadeDeps): conda.CondaCommands {
  return { exe: deps.config.condaExe, channels: deps.config.channels };
}

/** What the env holds now: its packages and its explicit lock (one sandbox command, both lists). */
export async function listed(
  deps: CascadeDeps,
  stepId: string,
  env: string,
): Promise<{ packages: Record<string, string>; lock: string | null } | undefined> {
  const run = await deps.runner.run(stepId, conda.snapshot(commands(deps), env), {
    timeoutSeconds: 300,
  });
  if (run.state !== "exited" || run.exitCode !== 0) return undefined;
  return conda.parseSnapshot(run.output);
}

/** The manifest entry as the env is now: packages and lock from one `listed`. */
export async function refreshFromSandbox(
  deps: CascadeDeps,
  stepId: string,
  env: string,
): Promise<boolean> {
  const now = await listed(deps, stepId, env);
  if (now)
    await refreshPackages(deps.db, deps.agentId, env, now.packages, { explicitLock: now.lock });
  return Boolean(now);
}

export function done(
  deps: CascadeDeps,
  id: string,
  patch: Parameters<typeof updateInstall>[2],
): Promise<InstallRow> {
  return updateInstall(deps.db, id, patch).then(async () => (await getInstall(deps.db, id))!);
}

/** Undoes a failed or interrupted install: back to the revision from before it, manifest from the env. */
export async function rollBack(
  deps: CascadeDeps,
  id: string,
  env: string,
  revision: number | null,
  why: string,
  tried: InstallRow["tried"],
): Promise<InstallRow> {
  let note = "";
  if (revision !== null) {
    const back = await deps.runner.run(
      `${id}.rollback.${env}`,
      conda.rollback(commands(deps), env, revision),
      { timeoutSeconds: deps.config.installTimeoutSeconds },
    );
    if (back.state !== "exited" || back.exitCode !== 0)
      note = `; rolling back to revision ${revision} failed too (exit ${back.exitCode}): run \`conda install -n ${env} --revision ${revision}\``;
  }
  await refreshFromSandbox(deps, `${id}.list-after.${env}`, env);
  return done(deps, id, {
    status: note ? "failed" : "rolled-back",
    envName: env,
    tried,
    error: `${why}; ${env} was rolled back to revision ${revision ?? "?"} and is as it was${note}`,
  });
}

/** Takes the env's lock (rolling back an install whose caller died for good first), or says why not. */
export async function takeEnv(
  deps: CascadeDeps,
  id: string,
  env: string,
): Promise<string | undefined> {
  const leaseMs = deps.config.installTimeoutSeconds * 1000 + SLACK_MS;
  for (let attempt = 0; attempt < 2; attempt++) {
    const lock = await lockEnv(deps.db, id, deps.agentId, env, leaseMs);
    if (lock.kind === "held") return undefined;
    if (lock.kind === "busy")
      return `another install into ${env} is running (${lock.holder.id}: ${lock.holder.packages.join(" ")}): one install per env at a time; try again when it has finished`;
    await recoverStale(deps, lock.holder);
  }
  return `${env} is still held by an interrupted install`;
}

/** An install whose caller never came back: undo what it may have done, and close its record. */
export async function recoverStale(deps: CascadeDeps, holder: InstallRow): Promise<void> {
  const env = holder.envName!;
  if (holder.kind === "create" || holder.kind === "recreate") {
    await deps.runner.run(`${holder.id}.remove.${env}`, conda.removeEnv(commands(deps), env), {
      timeoutSeconds: 300,
    });
    await updateInstall(deps.db, holder.id, {
      status: "failed",
      error: `interrupted: its caller never came back; the half-made ${env} was removed`,
    });
    return;
  }
  await rollBack(
    deps,
    holder.id,
    env,
    holder.revisionBefore,
    "interrupted: its caller never came back",
    holder.tried,
  );
}

export function nv(record: conda.PackageRecord): { name: string; version: string } {
  return { name: record.name, version: record.version };
}

export function mib(bytes: number): number {
  return Math.round(bytes / 1024 ** 2);
}
