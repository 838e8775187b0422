import type * as z from "zod";
import { describeIssues } from "./issue-text.ts";
import { PermanentError } from "../core/errors.ts";

/**
 * Reading the config in force, with whatever schema the caller composed: the gateway parses with
 * the base schema extended by every channel's (functions/channels/gateway-config.ts); a reader that
 * needs one section (the database client) parses only that. This file knows no schema of its own,
 * so loading it loads no channel.
 */

/** The config does not validate: the same file fails the same way until it is changed. */
export class ConfigError extends PermanentError {
  constructor(readonly issues: string[]) {
    super(`invalid config:\n${issues.map((line) => `  ${line}`).join("\n")}`);
  }
}

/** Validates a parsed config object (or one section of it); errors name the key path and the reason. */
export function parseConfigWith<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  throw new ConfigError(describeIssues(result.error.issues));
}

declare const EDGECLAW_BUNDLED_CONFIG: unknown;

interface ConfigSource {
  EDGECLAW_CONFIG?: string;
}

/** Parsed configs by schema, then by source text: an isolate parses each config once per schema. */
const cache = new WeakMap<z.ZodType, Map<string, unknown>>();

/**
 * The config in force for this isolate, parsed with `schema`: `env.EDGECLAW_CONFIG` (JSON) when
 * set, else the config the build bundled with `--define EDGECLAW_BUNDLED_CONFIG:<json>`, else the
 * defaults. `section` parses only that top-level key (`database`) and skips everything else.
 */
export function configFromEnvWith<S extends z.ZodType>(
  schema: S,
  env: ConfigSource,
  section?: string,
): z.output<S> {
  const source = env.EDGECLAW_CONFIG ?? bundledConfigJson();
  let bySource = cache.get(schema);
  if (!bySource) cache.set(schema, (bySource = new Map()));
  const key = section === undefined ? source : `${section}\u0000${source}`;
  if (bySource.has(key)) return bySource.get(key) as z.output<S>;
  const raw: unknown = JSON.parse(source);
  const parsed = parseConfigWith(
    schema,
    section === undefined ? raw : (raw as Record<string, unknown> | null)?.[section],
  );
  bySource.set(key, parsed);
  return parsed;
}

/** The config in force as written (before defaults): what `config check` and the secret scan read. Throws SyntaxError on bad JSON. */
export function rawConfigFromEnv(env: ConfigSource): unknown {
  return JSON.parse(env.EDGECLAW_CONFIG ?? bundledConfigJson());
}

function bundledConfigJson(): string {
  return typeof EDGECLAW_BUNDLED_CONFIG === "undefined"
    ? "{}"
    : JSON.stringify(EDGECLAW_BUNDLED_CONFIG);
}
