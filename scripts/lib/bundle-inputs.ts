import { relative } from "node:path";
import { DEFAULT_WORKSPACE_KEY } from "../../functions/config/bundled-workspace.ts";
import {
  ConfigFileError,
  loadConfigFile,
  type ConfigLookup,
  type LoadedConfig,
} from "./config-file.ts";
import { plainSecretPaths } from "../../functions/config/secret-scan.ts";
import { unpricedModelWarnings } from "../../functions/agent/unpriced-models.ts";
import { bundleDefineArgs, DefineTooLargeError } from "./wrangler.ts";
import {
  loadWorkspaceSeeds,
  WorkspaceSeedError,
  type WorkspaceSeedResult,
} from "./workspace-seed.ts";

export interface BundleInputs {
  loaded: LoadedConfig;
  workspace: WorkspaceSeedResult;
  /** `--define …` arguments for wrangler (config + workspace seed). */
  defineArgs: string[];
  /** Things the user should hear about before a build; none of them stops it. */
  warnings: string[];
  /** One line naming what is bundled, e.g. `config edgeclaw.json5, workspace: * (4 files)`. */
  summary: string;
}

/**
 * Everything dev, build and deploy bundle into the Worker: the validated config and the workspace
 * seeds. Every problem comes back as a ConfigFileError (key-path lines) so the scripts report alike.
 */
export function loadBundleInputs(lookup: ConfigLookup = {}): BundleInputs {
  const projectDir = lookup.cwd ?? process.cwd();
  const loaded = loadConfigFile(lookup);
  let workspace: WorkspaceSeedResult;
  let defineArgs: string[];
  try {
    workspace = loadWorkspaceSeeds(loaded.config, {
      projectDir,
      baseDir: loaded.baseDir,
      raw: loaded.raw,
    });
    defineArgs = bundleDefineArgs(loaded.raw, workspace.seeds);
  } catch (error) {
    if (error instanceof WorkspaceSeedError) throw new ConfigFileError(loaded.file, error.lines);
    if (error instanceof DefineTooLargeError)
      throw new ConfigFileError(loaded.file, [error.message]);
    throw error;
  }

  const warnings = [
    ...loaded.warnings,
    ...unpricedModelWarnings(loaded.config, process.env),
    ...workspace.warnings.map((line) => `workspace: ${line}`),
    ...plainSecretPaths(loaded.raw).map(
      (path) =>
        `${path}: a plain secret string is bundled into the Worker script; prefer { source: "env", id: "…" } and a Worker secret`,
    ),
  ];
  const seedList = Object.entries(workspace.seeds).map(([key, files]) => {
    const name =
      key === DEFAULT_WORKSPACE_KEY
        ? relative(projectDir, workspace.folders[key]!) || "."
        : `agent ${key}`;
    return `${name} (${Object.keys(files).length} files)`;
  });
  const configName = loaded.file
    ? relative(projectDir, loaded.file) || loaded.file
    : "defaults (no edgeclaw.json5)";
  const summary = `config ${configName}; workspace seed: ${seedList.length ? seedList.join(", ") : "none"}`;
  return { loaded, workspace, defineArgs, warnings, summary };
}
