import { describeIssues } from "./issue-text.ts";
import { configSchema, type EdgeclawConfig } from "./schema.ts";
import { PermanentError } from "../core/errors.ts";

/** The config does not validate: the same file fails the same way until it is changed. */
export class ConfigError extends PermanentError {
  constructor(readonly issues: string[]) {
    super(`invalid config:\n${issues.map((line) => `  ${line}`).join("\n")}`);
  }
}

/** Validates a parsed config object; errors name the key path and the reason. */
export function parseConfig(raw: unknown): EdgeclawConfig {
  const result = configSchema.safeParse(raw ?? {});
  if (result.success) return result.data;
  throw new ConfigError(describeIssues(result.error.issues));
}

declare const EDGECLAW_BUNDLED_CONFIG: unknown;

const cache = new Map<string, EdgeclawConfig>();

/**
 * The config in force for this isolate: `env.EDGECLAW_CONFIG` (JSON) when set, else the config the
 * build bundled with `--define EDGECLAW_BUNDLED_CONFIG:<json>`, else the defaults.
 */
export function configFromEnv(env: { EDGECLAW_CONFIG?: string }): EdgeclawConfig {
  const source = env.EDGECLAW_CONFIG ?? bundledConfigJson();
  const hit = cache.get(source);
  if (hit) return hit;
  const parsed = parseConfig(JSON.parse(source));
  cache.set(source, parsed);
  return parsed;
}

/** The config in force as written (before defaults): what `config check` and the secret scan read. Throws SyntaxError on bad JSON. */
export function rawConfigFromEnv(env: { EDGECLAW_CONFIG?: string }): unknown {
  return JSON.parse(env.EDGECLAW_CONFIG ?? bundledConfigJson());
}

function bundledConfigJson(): string {
  return typeof EDGECLAW_BUNDLED_CONFIG === "undefined"
    ? "{}"
    : JSON.stringify(EDGECLAW_BUNDLED_CONFIG);
}
