import * as z from "zod";

/**
 * The workspace seed files the build bundles into the Worker (`--define EDGECLAW_BUNDLED_WORKSPACE:<json>`,
 * written by scripts/lib/workspace-seed.ts): for each agent with its own seed folder, and for the
 * shared default folder (`workspace/`), a map of relative path → file content. The workspace store
 * copies these into Postgres the first time an agent is used; after that Postgres is the truth.
 */
export type BundledWorkspace = Record<string, Record<string, string>>;

/** Key of the shared seed (the project's `workspace/` folder); no agent id can contain `*`. */
export const DEFAULT_WORKSPACE_KEY = "*";

export const bundledWorkspaceSchema = z.record(z.string(), z.record(z.string(), z.string()));

declare const EDGECLAW_BUNDLED_WORKSPACE: unknown;

let cached: BundledWorkspace | undefined;

/** All bundled seeds, keyed by agent id or DEFAULT_WORKSPACE_KEY; `{}` when the build bundled none. */
export function bundledWorkspace(): BundledWorkspace {
  if (cached) return cached;
  const raw = typeof EDGECLAW_BUNDLED_WORKSPACE === "undefined" ? {} : EDGECLAW_BUNDLED_WORKSPACE;
  const parsed = bundledWorkspaceSchema.safeParse(raw);
  // A malformed define can only come from a broken build; an empty seed is the safe reading of it.
  cached = parsed.success ? parsed.data : {};
  return cached;
}

/** The seed for one agent: its own folder when it has one, else the shared default folder. */
export function workspaceSeedFor(
  agentId: string,
  seeds: BundledWorkspace = bundledWorkspace(),
): Record<string, string> {
  return seeds[agentId] ?? seeds[DEFAULT_WORKSPACE_KEY] ?? {};
}
