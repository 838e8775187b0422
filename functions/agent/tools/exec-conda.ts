import type { EdgeclawConfig } from "../../config/schema.ts";
import type { DbEnv } from "../../db/client.ts";
import { computeEnvFor } from "../../compute-env/config.ts";
import { ensureManifest } from "../../compute-env/cascade.ts";
import { loadManifest } from "../../compute-env/manifest.ts";
import { describeRestore, restoreEnvs } from "../../compute-env/restore.ts";
import { sandboxRunner } from "../../compute-env/runner.ts";
import { scriptsRun, wrapCommand, type WrappedCommand } from "../../compute-env/wrap.ts";
import { readFiles } from "../workspace.ts";
import type { ToolContext } from "../types.ts";

/**
 * exec's hook into the computing environment (AcaClaw's before_tool_call): the command the model
 * wrote, as it runs — `conda run --no-capture-output -n <env> …` in the env it needs — or undefined when
 * the agent has no computeEnv. The manifest is filled by detection the first time (one command in
 * the sandbox, keyed by this call's id so a resumed call does not detect twice). A registered env
 * this sandbox lacks (a fresh container) is recreated from its lock first (compute-env/restore.ts),
 * and the command's note says so.
 */
export async function condaWrapped(
  ctx: ToolContext,
  command: string,
  callId: string,
): Promise<WrappedCommand | undefined> {
  const computeEnv = computeEnvFor(ctx.config, ctx.agentId);
  if (!computeEnv) return undefined;
  const db = ctx.env as DbEnv;
  let envs = await loadManifest(db, ctx.agentId);
  // The sandbox side is best effort here: when it cannot be reached the command still runs (and
  // exec reports the sandbox's own error), only without detection or rebuilt envs.
  let notes: string[] = [];
  try {
    const runner = sandboxRunner(ctx.config, ctx.env, ctx.agentId, ctx.sessionKey, computeEnv);
    const deps = { db, runner, config: computeEnv, agentId: ctx.agentId };
    if (!envs.length)
      envs = await ensureManifest(deps, `${ctx.agentId}:${callId}.detect`).catch(() => envs);
    const restored = await restoreEnvs(deps, `${ctx.agentId}:${callId}`, envs);
    if (restored.length) envs = await loadManifest(db, ctx.agentId);
    notes = restored.map(describeRestore);
  } catch (error) {
    notes = [`the envs could not be checked against their locks: ${(error as Error).message}`];
  }
  const paths = scriptsRun(command);
  const scripts = paths.length ? [...(await readFiles(db, ctx.agentId, paths)).values()] : [];
  const wrapped = wrapCommand(
    command,
    envs,
    computeEnv,
    scripts.map((file) => file.content),
  );
  return notes.length ? { ...wrapped, reason: [wrapped.reason, ...notes].join("; ") } : wrapped;
}

/** PATH entries the computing environment adds after tools.exec.pathPrepend: conda's bin. */
export function condaPathEntries(config: EdgeclawConfig, agentId: string): string[] {
  const computeEnv = computeEnvFor(config, agentId);
  return computeEnv ? [`${computeEnv.condaPrefix}/bin`] : [];
}
