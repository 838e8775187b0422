import type { EdgeclawConfig } from "../config/schema.ts";
import { Redactor } from "./redact.ts";

/**
 * Structured logs: one console line = one JSON object `{ level, msg, time, runId?, sessionKey?, … }`,
 * which Workers Logs / Logpush index by field. Every line goes through the Redactor first, so a
 * secret or a user's message that ends up in an error (a provider echoing the prompt, a database
 * error carrying parameters) is masked before it leaves the isolate.
 */

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal";
const RANK: Record<LogLevel | "silent", number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: 100,
};

export interface LogContext {
  runId?: string;
  sessionKey?: string;
  [field: string]: unknown;
}

export interface Logger {
  trace(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** The same logger with more context fields (and more message texts to mask). */
  child(context: LogContext, sensitiveTexts?: readonly string[]): Logger;
}

const redactors = new WeakMap<object, { config: EdgeclawConfig; redactor: Redactor }>();

/** Secrets come from the Worker's bindings: every string binding named like a credential, and every SecretRef / inline secret the config names. */
function redactorFor(config: EdgeclawConfig, env: Record<string, unknown>): Redactor {
  const hit = redactors.get(env);
  if (hit && hit.config === config) return hit.redactor;
  const redactor = new Redactor({
    secrets: configuredSecrets(config, env),
    extraPatterns: config.logging.redactPatterns,
    redactSensitive: config.logging.redactSensitive,
  });
  redactors.set(env, { config, redactor });
  return redactor;
}

const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|KEY|DATABASE_URL|CREDENTIAL)/i;
const SECRET_KEY = /(token|secret|password|apikey|api_key|privatekey|key)$/i;

export function configuredSecrets(config: EdgeclawConfig, env: Record<string, unknown>): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env))
    if (typeof value === "string" && SECRET_NAME.test(name) && value.length >= 6) out.add(value);
  const walk = (value: unknown, key: string | undefined, depth: number) => {
    if (depth > 12) return;
    if (typeof value === "string") {
      if (key && SECRET_KEY.test(key) && !/^\$\{[A-Z0-9_]+\}$/.test(value)) out.add(value);
      return;
    }
    if (value === null || typeof value !== "object") return;
    const record = value as Record<string, unknown>;
    if (record.source === "env" && typeof record.id === "string") {
      const resolved = env[record.id];
      if (typeof resolved === "string") out.add(resolved);
      return;
    }
    for (const [k, v] of Object.entries(record)) walk(v, Array.isArray(value) ? key : k, depth + 1);
  };
  walk(config, undefined, 0);
  return [...out];
}

export function createLogger(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
  context: LogContext = {},
  sensitiveTexts: readonly string[] = [],
): Logger {
  const redactor = redactorFor(config, env);
  const threshold = RANK[config.logging.level];
  const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[level] < threshold) return;
    const record = {
      level,
      msg: redactor.string(msg, sensitiveTexts),
      time: new Date().toISOString(),
      ...(redactor.value({ ...context, ...fields }, sensitiveTexts) as Record<string, unknown>),
    };
    const line = JSON.stringify(record);
    if (level === "error" || level === "fatal") console.error(line);
    else if (level === "warn") console.warn(line);
    else console.log(line);
  };
  return {
    trace: (msg, fields) => write("trace", msg, fields),
    debug: (msg, fields) => write("debug", msg, fields),
    info: (msg, fields) => write("info", msg, fields),
    warn: (msg, fields) => write("warn", msg, fields),
    error: (msg, fields) => write("error", msg, fields),
    child: (more, texts = []) =>
      createLogger(config, env, { ...context, ...more }, [...sensitiveTexts, ...texts]),
  };
}

/** Masks every configured secret (never message text): for what operators are shown (control page, admin API). */
export function secretMasker(
  config: EdgeclawConfig,
  env: Record<string, unknown>,
): (text: string) => string {
  const redactor = new Redactor({
    secrets: configuredSecrets(config, env),
    extraPatterns: config.logging.redactPatterns,
    redactSensitive: "off",
  });
  return (text) => redactor.string(text);
}
