import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { SandboxBind } from "./bwrap.ts";

/**
 * A conda installation on the companion's host, bound into every bubblewrap command read-write at
 * its own path (conda prefixes are not relocatable), so agents.defaults.computeEnv finds its envs
 * and the cascade can install into them: EDGECLAW_SANDBOX_CONDA_PREFIX when set ("none" binds
 * nothing), else AcaClaw's own Miniforge (~/.acaclaw/miniforge3) when it exists. The agent's
 * computeEnv.condaPrefix must name the same path.
 */
export function condaBinds(env: NodeJS.ProcessEnv = process.env): SandboxBind[] {
  const configured = env.EDGECLAW_SANDBOX_CONDA_PREFIX;
  if (configured === "none") return [];
  const prefix = configured || join(homedir(), ".acaclaw", "miniforge3");
  if (!existsSync(prefix)) return [];
  return [{ source: prefix, target: prefix, writable: true }];
}
