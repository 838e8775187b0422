import * as conda from "./conda-cli.ts";
import { disciplineById } from "./disciplines.ts";
import {
  beginInstall,
  FINAL_STATUSES,
  getInstall,
  updateInstall,
  type InstallRow,
  type InstallStart,
} from "./installs.ts";
import { loadManifest, registerEnv, type ManifestEnv } from "./manifest.ts";
import { detect } from "./detect.ts";
import { egressProblem } from "./egress.ts";
import { restoreEnvs } from "./restore.ts";
import {
  commands,
  done,
  listed,
  mib,
  nv,
  recoverStale,
  refreshFromSandbox,
  rollBack,
  takeEnv,
  type CascadeDeps,
} from "./steps.ts";

export {
  commands,
  done,
  listed,
  mib,
  nv,
  recoverStale,
  refreshFromSandbox,
  rollBack,
  takeEnv,
  type CascadeDeps,
};

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
/** The manifest, filled from detection the first time (the primary env as found in the sandbox). */
export async function ensureManifest(deps: CascadeDeps, stepId: string): Promise<ManifestEnv[]> {
  const envs = await loadManifest(deps.db, deps.agentId);
  if (envs.some((e) => e.type === "primary")) return envs;
  const found = await detect(deps.runner, deps.config, stepId);
  const primary = found.envs.find((e) => e.name === deps.config.primary);
  if (!primary) return envs;
  // What the image says it built (its env-manifest.json) comes first; else the configured disciplines.
  const seeded = found.seed?.environments[primary.name];
  const disciplines = (seeded?.disciplines ?? deps.config.disciplines).filter((id) =>
    disciplineById(id),
  );
  const labels = disciplines.map((id) => disciplineById(id)!.label);
  const now = await listed(deps, `${stepId}.lock`, primary.name);
  await registerEnv(deps.db, deps.agentId, {
    name: primary.name,
    type: "primary",
    description: seeded?.description ?? ["Base scientific environment", ...labels].join(" + "),
    packages: now?.packages ?? primary.packages,
    explicitLock: now?.lock ?? null,
    disciplines,
  });
  return loadManifest(deps.db, deps.agentId);
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
  // A fresh sandbox first gets its envs back from their locks: the dry-runs must see them as they are.
  await restoreEnvs(deps, id, envs);
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
    await refreshFromSandbox(deps, `${id}.list.${env}`, env);
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
  return `${packages.join(" ")} conflicts with ${tried.map((t) => t.env).join(" and ")}${conflictDetail(tried[0]?.message ?? "")}`;
}

/**
 * The line of a solver's message that says what clashes (conda's "Package numpy conflicts for:",
 * libmamba's "… is not installable because it requires …"), with the indented lines under it,
 * rather than its headline ("The following specifications were found to be incompatible…").
 */
export function conflictDetail(message: string): string {
  const lines = message.split("\n");
  let at = lines.findIndex((line) =>
    /conflicts for|is not installable|requires|would require|nothing provides/i.test(line),
  );
  if (at < 0) at = lines.findIndex((line) => line.trim());
  if (at < 0) return "";
  const under: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (!/^\s+\S/.test(line) || under.length === 6) break;
    under.push(line.trim());
  }
  const detail = [lines[at]!.trim().replace(/:$/, ""), ...under].join(" ").slice(0, 400);
  return detail ? `: ${detail}` : "";
}
