import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { channelSecretNames } from "../../functions/channels/credential-check.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { referencedSecretIds } from "../../functions/config/secret-scan.ts";
import { profileSecretName } from "../../functions/config/auth-schema.ts";

/**
 * The secrets a local Worker sees. wrangler reads `.dev.vars` itself only when it is given no env
 * file, and it never reads the shell; `npm run dev` needs both plus its own bindings (database,
 * generated token), so it merges them into one file under the data dir and hands the local Worker
 * (local-worker.mjs) that file with `--vars-file`. That keeps secret values off the command line, where `ps` would show them.
 */

/** Shell variables passed through to the local Worker when set (besides those the config names). */
export const PASSTHROUGH_VARS = [
  "EDGECLAW_FAKE_MODEL",
  // The message-cost bench: per-step time, rows and DO calls in each SessionDO (upkeep/step-profile.ts).
  "EDGECLAW_STEP_PROFILE",
  "EDGECLAW_GATEWAY_TOKEN",
  "OPENCLAW_GATEWAY_TOKEN",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
] as const;

export function readDevVarsFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return definedOnly(parseEnv(readFileSync(path, "utf8")));
}

/** Values from the shell for the pass-through names and any extra names (SecretRef ids). */
export function shellVars(
  env: NodeJS.ProcessEnv,
  extraNames: Iterable<string> = [],
): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of new Set<string>([...PASSTHROUGH_VARS, ...extraNames])) {
    const value = env[name];
    if (value !== undefined && value !== "") picked[name] = value;
  }
  return picked;
}

/**
 * The shell variables the config makes the Worker read, besides PASSTHROUGH_VARS: every SecretRef
 * id, the env fallbacks of each enabled channel account (LINE_CHANNEL_SECRET for a
 * `channels.line` block that names no secret), and each API-key auth profile's own secret
 * (ANTHROPIC_API_KEY_WORK for `auth.profiles["anthropic:work"]`).
 */
export function configuredVarNames(raw: Record<string, unknown>, config: EdgeclawConfig): string[] {
  return [
    ...referencedSecretIds(raw),
    ...channelSecretNames(config).flatMap((secret) => [secret.name, ...secret.alternatives]),
    ...Object.entries(config.auth.profiles).flatMap(([id, profile]) => {
      const name = profile.mode === "api_key" ? profileSecretName(id) : undefined;
      return name ? [name] : [];
    }),
  ];
}

/** Writes a dotenv file readable only by the owner; returns nothing, throws on unquotable values. */
export function writeEnvFile(path: string, vars: Record<string, string>): void {
  const lines = Object.entries(vars).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name))
      throw new Error(`cannot pass variable named ${JSON.stringify(name)}`);
    return `${name}=${quoteEnvValue(name, value)}`;
  });
  writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
}

/**
 * dotenv (which wrangler uses) takes quoted values literally except `\n` in double quotes, and has
 * no escape for the quote itself: pick a quote the value does not contain.
 */
export function quoteEnvValue(name: string, value: string): string {
  if (value.includes("\n") || value.includes("\r")) {
    if (value.includes('"') || value.includes("\\n"))
      throw new Error(`${name}: a multi-line value with quotes cannot be passed`);
    return `"${value.replace(/\r/g, "\\r").replace(/\n/g, "\\n")}"`;
  }
  for (const quote of ["'", '"', "`"])
    if (!value.includes(quote)) return `${quote}${value}${quote}`;
  throw new Error(`${name}: a value containing ', " and \` cannot be passed through an env file`);
}

function definedOnly(record: NodeJS.Dict<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) out[key] = value;
  return out;
}
