import * as conda from "./conda-cli.ts";
import { CORE_STACK } from "./disciplines.ts";
import { beginInstall, FINAL_STATUSES, updateInstall, type InstallRow } from "./installs.ts";
import { registerEnv } from "./manifest.ts";
import { egressProblem } from "./egress.ts";
import { restoreEnvs } from "./restore.ts";
import {
  commands,
  done,
  ensureManifest,
  listed,
  mib,
  nv,
  takeEnv,
  type CascadeDeps,
} from "./cascade.ts";

/**
 * The cascade's step 3 once the user agreed: `conda create` of the new auxiliary env — after a
 * dry-run of the same create solved — then its registration with description and reason, and the
 * question marked answered. A create that fails or is cut off removes the half-made env and
 * registers nothing. Keyed like every install: the same request again reads its record.
 */
export async function createEnv(
  deps: CascadeDeps,
  start: {
    id: string;
    name: string;
    packages: string[];
    description: string;
    reason: string;
    questionId?: string;
    requestedBy?: string;
    sessionKey?: string;
  },
): Promise<InstallRow> {
  const row = await beginInstall(deps.db, {
    ...start,
    kind: "create",
    agentId: deps.agentId,
    envName: start.name,
  });
  if (FINAL_STATUSES.includes(row.status)) return row;
  const id = row.id;
  let packages: string[];
  try {
    conda.checkEnvName(start.name);
    packages = conda.checkPackages(row.packages);
  } catch (error) {
    return done(deps, id, { status: "refused", error: (error as Error).message });
  }
  const egress = egressProblem(deps.config.channels, deps.runner.network);
  if (egress) return done(deps, id, { status: "refused", error: egress });
  const envs = await ensureManifest(deps, `${id}.detect`);
  await restoreEnvs(deps, id, envs);
  if (envs.some((e) => e.name === start.name))
    return done(deps, id, {
      status: "refused",
      error: `an env named ${start.name} is already registered`,
    });
  const lock = await takeEnv(deps, id, start.name);
  if (lock) return done(deps, id, { status: "refused", error: lock });
  // AcaClaw: the requested packages with compatible base packages — the primary's Python and the
  // core stack, unpinned; when even that does not solve, the requested packages with Python alone.
  const python = envs
    .find((e) => e.type === "primary")
    ?.pythonVersion?.split(".")
    .slice(0, 2)
    .join(".");
  const pythonSpec = python ? [`python=${python}`] : [];
  const base = CORE_STACK.map(conda.specName)
    .filter((n) => n !== "python" && !packages.some((p) => conda.specName(p) === n))
    .slice(0, 4);
  let chosen: string[] | undefined;
  let conflict = "";
  for (const [step, specs] of [
    ["base", [...pythonSpec, ...base, ...packages]],
    ["bare", [...pythonSpec, ...packages]],
  ] as const) {
    const dry = await deps.runner.run(
      `${id}.dry-create.${step}`,
      conda.dryRunCreate(commands(deps), start.name, specs),
      { network: true },
    );
    const outcome = conda.parseSolve(dry.output, dry.exitCode);
    if (outcome.kind === "ok") {
      if (outcome.downloadBytes > deps.config.maxDownloadBytes)
        return done(deps, id, {
          status: "refused",
          error: `${start.name} would download ${mib(outcome.downloadBytes)} MiB, over agents.defaults.computeEnv.maxDownloadBytes`,
        });
      chosen = [...specs];
      break;
    }
    if (outcome.kind !== "conflict")
      return done(deps, id, {
        status: outcome.kind === "not-found" ? "refused" : "failed",
        error: outcome.message,
      });
    conflict = outcome.message;
  }
  if (!chosen)
    return done(deps, id, {
      status: "refused",
      error: `${packages.join(" ")} do not solve even alone: ${conflict}`,
    });
  const run = await deps.runner.run(
    `${id}.create.${start.name}`,
    conda.create(commands(deps), start.name, chosen),
    { network: true },
  );
  const outcome = conda.parseSolve(run.output, run.exitCode);
  if (run.state !== "exited" || run.exitCode !== 0 || outcome.kind !== "ok") {
    await deps.runner.run(
      `${id}.remove.${start.name}`,
      conda.removeEnv(commands(deps), start.name),
      { timeoutSeconds: 300 },
    );
    return done(deps, id, {
      status: "failed",
      error: `creating ${start.name} failed (${run.timedOut ? "timed out" : run.state === "exited" ? `exit ${run.exitCode}` : "lost"}); the half-made env was removed and nothing was registered`,
    });
  }
  const now = await listed(deps, `${id}.list.${start.name}`, start.name);
  await registerEnv(deps.db, deps.agentId, {
    name: start.name,
    type: "auxiliary",
    description: start.description,
    createdReason: start.reason,
    packages: now?.packages ?? {},
    explicitLock: now?.lock ?? null,
  });
  if (start.questionId)
    await updateInstall(deps.db, start.questionId, {
      status: "answered",
      reason: `created ${start.name} (${id})`,
    });
  return done(deps, id, { status: "created", changes: { link: outcome.link.map(nv), unlink: [] } });
}
