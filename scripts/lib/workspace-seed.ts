import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import {
  DEFAULT_WORKSPACE_KEY,
  type BundledWorkspace,
} from "../../functions/config/bundled-workspace.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";

/** The shared seed folder at the project root. */
export const DEFAULT_WORKSPACE_DIR = "workspace";
/** Same bound as the workspace store's per-file limit: a bigger seed could never be written back. */
export const MAX_SEED_FILE_BYTES = 1024 * 1024;

export class WorkspaceSeedError extends Error {
  constructor(readonly lines: string[]) {
    super(`workspace seed:\n${lines.map((line) => `  ${line}`).join("\n")}`);
    this.name = "WorkspaceSeedError";
  }
}

export interface WorkspaceSeedResult {
  seeds: BundledWorkspace;
  /** Files left out (binary, symlinks leaving the folder) — worth telling the user, not fatal. */
  warnings: string[];
  /** Folder each seed came from, by seed key. */
  folders: Record<string, string>;
}

export interface WorkspaceSeedOptions {
  /** Where `workspace/` lives (the project root). */
  projectDir: string;
  /** Where relative `workspace` settings in the config resolve (the config file's folder). */
  baseDir: string;
  /** The config as written: `agents.defaults.workspace` is an OpenClaw key the schema keeps loosely. */
  raw: Record<string, unknown>;
}

/**
 * Reads the seed folders: the shared default (`agents.defaults.workspace`, else `workspace/` at the
 * project root when it exists) and one per `agents.list[]` entry with its own `workspace`. A folder
 * the config names explicitly must exist; the implicit default may be absent.
 */
export function loadWorkspaceSeeds(
  config: EdgeclawConfig,
  options: WorkspaceSeedOptions,
): WorkspaceSeedResult {
  const result: WorkspaceSeedResult = { seeds: {}, warnings: [], folders: {} };
  const errors: string[] = [];

  const configuredDefault = defaultsWorkspace(options.raw);
  const defaultFolder = configuredDefault
    ? resolveFolder(configuredDefault, options.baseDir)
    : resolve(options.projectDir, DEFAULT_WORKSPACE_DIR);
  if (configuredDefault || existsSync(defaultFolder)) {
    readSeed(
      DEFAULT_WORKSPACE_KEY,
      defaultFolder,
      configuredDefault ? "agents.defaults.workspace" : undefined,
    );
  }

  config.agents.list.forEach((agent, index) => {
    if (!agent.workspace) return;
    readSeed(
      agent.id,
      resolveFolder(agent.workspace, options.baseDir),
      `agents.list.${index}.workspace`,
    );
  });

  if (errors.length) throw new WorkspaceSeedError(errors);
  return result;

  function readSeed(key: string, folder: string, configKey: string | undefined) {
    if (!existsSync(folder) || !statSync(folder).isDirectory()) {
      errors.push(`${configKey ?? "workspace"}: folder not found: ${folder}`);
      return;
    }
    const files: Record<string, string> = {};
    collectFiles(folder, folder, files, result.warnings, errors);
    result.seeds[key] = files;
    result.folders[key] = folder;
  }
}

function defaultsWorkspace(raw: Record<string, unknown>): string | undefined {
  const agents = raw.agents;
  if (!agents || typeof agents !== "object") return undefined;
  const defaults = (agents as Record<string, unknown>).defaults;
  if (!defaults || typeof defaults !== "object") return undefined;
  const workspace = (defaults as Record<string, unknown>).workspace;
  return typeof workspace === "string" && workspace.trim() ? workspace : undefined;
}

function resolveFolder(setting: string, baseDir: string): string {
  if (setting === "~" || setting.startsWith("~/")) return join(homedir(), setting.slice(1));
  return resolve(baseDir, setting);
}

const decoder = new TextDecoder("utf-8", { fatal: true });

function collectFiles(
  root: string,
  dir: string,
  files: Record<string, string>,
  warnings: string[],
  errors: string[],
) {
  const realRoot = realpathSync(root);
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    // Dotfiles (.git, .DS_Store, editor swap files) are never part of an agent's workspace.
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const full = join(dir, entry.name);
    const path = relative(root, full).split(sep).join("/");
    if (lstatSync(full).isSymbolicLink()) {
      const target = realTarget(full);
      if (target === undefined) {
        warnings.push(`${path}: skipped, broken symlink`);
        continue;
      }
      if (target !== realRoot && !target.startsWith(realRoot + sep)) {
        warnings.push(`${path}: skipped, symlink points outside the workspace folder`);
        continue;
      }
      // A linked folder could loop back on an ancestor; linked files are enough.
      if (statSync(full).isDirectory()) {
        warnings.push(`${path}: skipped, symlinked folder`);
        continue;
      }
    }
    const stat = statSync(full);
    if (stat.isDirectory()) {
      collectFiles(root, full, files, warnings, errors);
      continue;
    }
    if (!stat.isFile()) continue;
    if (stat.size > MAX_SEED_FILE_BYTES) {
      errors.push(
        `${join(root, path)}: ${stat.size} bytes, more than the ${MAX_SEED_FILE_BYTES}-byte limit per workspace file`,
      );
      continue;
    }
    const bytes = readFileSync(full);
    const text = decodeText(bytes);
    if (text === undefined) {
      warnings.push(`${path}: skipped, not a UTF-8 text file (the workspace holds text only)`);
      continue;
    }
    files[path] = text;
  }
}

function realTarget(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
