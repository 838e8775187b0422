import type { ComputeEnvConfig } from "../config/compute-env-schema.ts";
import type { DbEnv } from "../db/client.ts";
import * as conda from "./conda-cli.ts";
import { disciplineById } from "./disciplines.ts";
import {
  beginInstall,
  FINAL_STATUSES,
  getInstall,
  lockEnv,
  updateInstall,
  type InstallRow,
  type InstallStart,
} from "./installs.ts";
import { loadManifest, refreshPackages, registerEnv, type ManifestEnv } from "./manifest.ts";
import { detect } from "./detect.ts";
import type { CondaRunner } from "./runner.ts";
import { egressProblem } from "./egress.ts";

/**
 * AcaClaw's stage 3, the install cascade: `conda install --dry-run -n <primary> <pkg>`; no conflict:
 * install there. Conflict: the same dry-run in each registered auxiliary env, in the order they
 * were created. All conflict: a question for the user ("create a new env for it?"), answered by
 * createEnv. Nothing that breaks an env: an install only follows a dry-run that solved in that
 * env, and an install that fails, times out or is cut off is rolled back to the env's revision from
 * before it (`conda install --revision N`); a create that fails is removed. The manifest's packages
 * always come from the env's own `conda list` afterwards.
 *
 * Each step's sandbox command is keyed by the record id and the step, and the record is written
 * before and after each decision: the same request made again (a resumed run, a retried CLI call)
 * gets the first one's answers back and never installs twice.
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

/** The manifest, filled from detection the first time (the primary env as found in the sandbox). */
export async function ensureManifest(deps: CascadeDeps, stepId: string): Promise<ManifestEnv[]> {
  const envs = await loadManifest(deps.db, deps.agentId);
  if (envs.some((e) => e.type === "primary")) return envs;
  const found = await detect(deps.runner, deps.config, stepId);
  const primary = found.envs.find((e) => e.name === deps.config.primary);
  if (!primary) return envs;
  const labels = deps.config.disciplines.map((id) => disciplineById(id)?.label ?? id);
  await registerEnv(deps.db, deps.agentId, {
    name: primary.name,
    type: "primary",
    description: ["Base scientific environment", ...labels].join(" + "),
    packages: primary.packages,
    disciplines: deps.config.disciplines.filter((id) => disciplineById(id)),
  });
  return loadManifest(deps.db, deps.agentId);
}

export async function listed(
  deps: CascadeDeps,
  stepId: string,
  env: string,
): Promise<Record<string, string> | undefined> {
  const run = await deps.runner.run(stepId, conda.listPackages(commands(deps), env), {
    timeoutSeconds: 300,
  });
  if (run.state !== "exited" || run.exitCode !== 0) return undefined;
  try {
    return Object.fromEntries(conda.parseList(run.output).map((r) => [r.name, r.version]));
  } catch {
    return undefined;
  }
}

export function done(
  deps: CascadeDeps,
  id: string,
  patch: Parameters<typeof updateInstall>[2],
): Promise<InstallRow> {
  return updateInstall(deps.db, id, patch).then(async () => (await getInstall(deps.db, id))!);
}

export async function installPackages(
  deps: CascadeDeps,
  start: Omit<InstallStart, "kind" | "agentId"> & { kind?: "install" | "discipline" },
): Promise<InstallRow> {
  let row = await beginInstall(deps.db, {
    ...start,
    agentId: deps.agentId,
    kind: start.kind ?? "install",
  });
  if (FINAL_STATUSES.includes(row.status)) return row;
  const id = row.id;
  let packages: string[];
  try {
    packages = conda.checkPackages(row.packages);
    if (row.envName && row.kind !== "install") conda.checkEnvName(row.envName);
  } catch (error) {
    return done(deps, id, { status: "refused", error: (error as Error).message });
  }
  const egress = egressProblem(deps.config.channels, deps.runner.network);
  if (egress) return done(deps, id, { status: "refused", error: egress });
  const envs = await ensureManifest(deps, `${id}.detect`);
  if (!envs.length)
    return done(deps, id, {
      status: "failed",
      error: `the primary env "${deps.config.primary}" was not found in the sandbox: is conda at ${deps.config.condaPrefix} (agents.defaults.computeEnv.condaPrefix) and the env created (sandbox/Dockerfile)?`,
    });
  // A row the first attempt left running already chose its env; a named env is the only one tried.
  const order = row.envName ? envs.filter((e) => e.name === row.envName) : envs;
  if (!order.length)
    return done(deps, id, { status: "refused", error: `no registered env named "${row.envName}"` });
  const tried: InstallRow["tried"] = [];
  for (const target of order) {
    const dry = await deps.runner.run(
      `${id}.dry.${target.name}`,
      conda.dryRunInstall(commands(deps), target.name, packages),
      { network: true },
    );
    const outcome = conda.parseSolve(dry.output, dry.exitCode);
    if (outcome.kind === "not-found")
      return done(deps, id, { status: "refused", tried, error: outcome.message });
    if (outcome.kind === "error")
      return done(deps, id, {
        status: "failed",
        tried,
        error: `dry-run in ${target.name}: ${outcome.message}`,
      });
    if (outcome.kind === "conflict") {
      tried.push({ env: target.name, ok: false, message: outcome.message });
      await updateInstall(deps.db, id, { tried });
      continue;
    }
    tried.push({
      env: target.name,
      ok: true,
      message: outcome.alreadyInstalled
        ? "already installed"
        : `${outcome.link.length} to link, ${outcome.unlink.length} to unlink`,
    });
    if (outcome.alreadyInstalled)
      return done(deps, id, {
        status: "installed",
        envName: target.name,
        tried,
        changes: { link: [], unlink: [] },
      });
    if (outcome.downloadBytes > deps.config.maxDownloadBytes)
      return done(deps, id, {
        status: "refused",
        tried,
        error: `it would download ${mib(outcome.downloadBytes)} MiB into ${target.name}, over agents.defaults.computeEnv.maxDownloadBytes (${mib(deps.config.maxDownloadBytes)} MiB)`,
      });
    row = (await getInstall(deps.db, id))!;
    return applyInstall(deps, row, target.name, packages, tried);
  }
  const proposal = {
    name: proposeEnvName(packages, envs),
    packages,
    reason: conflictReason(packages, tried),
  };
  return done(deps, id, { status: "needs-new-env", tried, proposal });
}

async function applyInstall(
  deps: CascadeDeps,
  row: InstallRow,
  env: string,
  packages: string[],
  tried: InstallRow["tried"],
): Promise<InstallRow> {
  const id = row.id;
  const lock = await takeEnv(deps, id, env);
  if (lock) return done(deps, id, { status: "refused", tried, error: lock });
  let revision = row.revisionBefore;
  if (revision === null) {
    const revs = await deps.runner.run(`${id}.rev.${env}`, conda.revisions(commands(deps), env), {
      timeoutSeconds: 120,
    });
    revision = conda.parseLastRevision(revs.output) ?? null;
    await updateInstall(deps.db, id, { revisionBefore: revision, tried });
  }
  const run = await deps.runner.run(
    `${id}.install.${env}`,
    conda.install(commands(deps), env, packages),
    { network: true },
  );
  const outcome = conda.parseSolve(run.output, run.exitCode);
  if (run.state === "exited" && run.exitCode === 0 && outcome.kind === "ok") {
    const now = await listed(deps, `${id}.list.${env}`, env);
    if (now) await refreshPackages(deps.db, deps.agentId, env, now);
    return done(deps, id, {
      status: "installed",
      envName: env,
      tried,
      changes: { link: outcome.link.map(nv), unlink: outcome.unlink.map(nv) },
    });
  }
  const why =
    run.state === "lost" || run.state === "unknown"
      ? "the sandbox lost the install (its host restarted)"
      : run.timedOut
        ? `it ran past agents.defaults.computeEnv.installTimeoutSeconds (${deps.config.installTimeoutSeconds} s)`
        : `conda failed (exit ${run.exitCode}): ${outcome.kind === "ok" ? "" : outcome.message}`;
  return rollBack(deps, id, env, revision, why, tried);
}

/** Undoes a failed or interrupted install: back to the revision from before it, manifest from the env. */
async function rollBack(
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
  const now = await listed(deps, `${id}.list-after.${env}`, env);
  if (now) await refreshPackages(deps.db, deps.agentId, env, now);
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
  if (holder.kind === "create") {
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

/** The env the question proposes: `<primary>-gpu` for PyTorch/CUDA, `-jax`, `-tf`, else the first package. */
export function proposeEnvName(packages: readonly string[], envs: readonly ManifestEnv[]): string {
  const primary = envs.find((e) => e.type === "primary")?.name ?? "acaclaw";
  const names = packages.map(conda.specName);
  const topic = names.some((n) => n.startsWith("jax"))
    ? "jax"
    : names.some((n) => /^(pytorch|torch|cuda|cudatoolkit)/.test(n))
      ? "gpu"
      : names.some((n) => n.startsWith("tensorflow"))
        ? "tf"
        : (names[0] ?? "extra").replace(/[^A-Za-z0-9._-]/g, "-");
  let name = `${primary}-${topic}`;
  for (let n = 2; envs.some((e) => e.name === name); n++) name = `${primary}-${topic}-${n}`;
  return name;
}

function conflictReason(packages: readonly string[], tried: InstallRow["tried"]): string {
  const first = tried[0];
  const detail =
    first?.message
      .split("\n")
      .find((line) => /conflict|requires|incompatible|nothing provides/i.test(line)) ??
    first?.message.split("\n")[0] ??
    "";
  return `${packages.join(" ")} conflicts with ${tried.map((t) => t.env).join(" and ")}${detail ? `: ${detail.trim()}` : ""}`;
}
