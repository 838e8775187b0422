import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import JSON5 from "json5";
import { ConfigError } from "../../functions/config/load.ts";
import { gatewayConfigSchema, parseConfig } from "../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { findUnknownKeys } from "../../functions/config/unknown-keys.ts";

/** The file name looked for in the project root when `EDGECLAW_CONFIG` does not name one. */
export const DEFAULT_CONFIG_FILE = "edgeclaw.json5";

export interface LoadedConfig {
  /** Absolute path of the file read; undefined when none exists and the defaults apply. */
  file: string | undefined;
  /** Folder relative paths in the config (e.g. `agents.list[].workspace`) resolve against. */
  baseDir: string;
  /** The object as written (what the build bundles; the Worker re-validates and fills defaults). */
  raw: Record<string, unknown>;
  /** The validated config with OpenClaw's defaults applied. */
  config: EdgeclawConfig;
  /** OpenClaw keys in the file that edgeclaw does not implement yet (ignored). */
  warnings: string[];
}

/** A config that cannot be used; `lines` are `<key.path>: <reason>` (or `line:col: <reason>`). */
export class ConfigFileError extends Error {
  constructor(
    readonly file: string | undefined,
    readonly lines: string[],
  ) {
    super(
      `invalid config in ${file ?? "(defaults)"}:\n${lines.map((line) => `  ${line}`).join("\n")}`,
    );
    this.name = "ConfigFileError";
  }
}

export interface ConfigLookup {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Where the config lives: the path in env `EDGECLAW_CONFIG` (which must exist), else
 * `./edgeclaw.json5` when present, else none (the defaults). Note that the Worker binding of the
 * same name carries the config *contents*; in the shell it is a path.
 */
export function findConfigFile({
  env = process.env,
  cwd = process.cwd(),
}: ConfigLookup = {}): string | undefined {
  const named = env.EDGECLAW_CONFIG?.trim();
  if (named) {
    const file = resolve(cwd, named);
    if (!existsSync(file))
      throw new ConfigFileError(file, [`file not found (named by EDGECLAW_CONFIG)`]);
    return file;
  }
  const fallback = resolve(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(fallback) ? fallback : undefined;
}

/** Finds, reads, parses (JSON5) and validates the config; throws ConfigFileError with every problem. */
export function loadConfigFile(lookup: ConfigLookup = {}): LoadedConfig {
  const cwd = lookup.cwd ?? process.cwd();
  const file = findConfigFile(lookup);
  if (!file)
    return { file: undefined, baseDir: cwd, raw: {}, config: parseConfig({}), warnings: [] };
  const raw = parseConfigText(readFileSync(file, "utf8"), file);
  const { config, warnings } = validateConfig(raw, file);
  return { file, baseDir: dirname(file), raw, config, warnings };
}

/** Parses JSON5 text that must hold an object; syntax errors carry line and column. */
export function parseConfigText(text: string, file: string | undefined): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON5.parse(text);
  } catch (error) {
    throw new ConfigFileError(file, [describeSyntaxError(error), ...missingBracesHint(text)]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigFileError(file, ["(root): expected an object ({ … })"]);
  }
  return value as Record<string, unknown>;
}

/**
 * Validates a parsed config: schema problems and unknown keys (typos) are errors, thrown together;
 * OpenClaw keys edgeclaw does not implement yet come back as warnings.
 */
export function validateConfig(
  raw: Record<string, unknown>,
  file: string | undefined,
): { config: EdgeclawConfig; warnings: string[] } {
  const unknown = findUnknownKeys(raw, gatewayConfigSchema());
  let config: EdgeclawConfig | undefined;
  let issues: string[] = [];
  try {
    config = parseConfig(raw);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    issues = error.issues;
  }
  if (!config || unknown.errors.length > 0)
    throw new ConfigFileError(file, [...issues, ...unknown.errors]);
  return { config, warnings: unknown.warnings };
}

/**
 * A newcomer who reads "put `channels: { slack: {} }` in edgeclaw.json5" may write just that: keys
 * without the object around them. When wrapping the text in braces would make it parse, say so
 * instead of leaving them with "invalid character" at 1:1. (It stays an error: the file is JSON5,
 * and a file that only we could read would surprise every other JSON5 tool.)
 */
function missingBracesHint(text: string): string[] {
  try {
    JSON5.parse(`{\n${text}\n}`);
  } catch {
    return [];
  }
  return [
    "the file must be one object: wrap what you wrote in { … }, e.g. { channels: { slack: {} } }",
  ];
}

function describeSyntaxError(error: unknown): string {
  if (error instanceof SyntaxError) {
    const where = error as SyntaxError & { lineNumber?: number; columnNumber?: number };
    const message = error.message.replace(/^JSON5: /, "").replace(/ at \d+:\d+$/, "");
    return where.lineNumber
      ? `${where.lineNumber}:${where.columnNumber ?? 0}: ${message}`
      : message;
  }
  return String(error);
}

/** Prints a config problem the way every script reports it, and returns the exit code to use. */
export function reportConfigError(
  error: unknown,
  log: (line: string) => void = console.error,
): number {
  if (error instanceof ConfigFileError) {
    log(`edgeclaw: invalid config in ${error.file ?? "(defaults)"}:`);
    for (const line of error.lines) log(`  ${line}`);
    return 1;
  }
  throw error;
}
