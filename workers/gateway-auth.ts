import type { MiddlewareHandler } from "hono";
import { configFromEnv } from "../functions/config/load.ts";
import type { EdgeclawConfig } from "../functions/config/schema.ts";
import { resolveSecret } from "../functions/config/secret-ref.ts";
import type { Env } from "./env.ts";

/**
 * The gateway credential check shared by every operator surface (OpenAI-compatible API, web chat,
 * admin API). A valid `Authorization: Bearer <token>` is full operator access, as in OpenClaw.
 *
 * - `gateway.auth.mode: "none"` disables the check (private ingress only).
 * - mode "password": `gateway.auth.password` or OPENCLAW_GATEWAY_PASSWORD.
 * - otherwise the token: `gateway.auth.token` (SecretInput), else EDGECLAW_GATEWAY_TOKEN, else
 *   OPENCLAW_GATEWAY_TOKEN. No credential configured → every request is refused (fail closed).
 * - Failed attempts are limited per client IP by `gateway.auth.rateLimit` (default 10 per 60 s,
 *   then locked out for 5 min → 429 with Retry-After). The counter lives in this isolate's memory,
 *   like OpenClaw's per-process limiter: it slows a guesser down, it is not a global quota.
 */

export type GatewayAuthResult =
  | { ok: true }
  | { ok: false; status: 401 | 429; code: "missing_token" | "invalid_token" | "auth_not_configured" | "rate_limited"; message: string; retryAfterSeconds?: number };

interface AttemptWindow {
  failures: number;
  windowStart: number;
  lockedUntil: number;
}

const attempts = new Map<string, AttemptWindow>();
const MAX_TRACKED_CLIENTS = 10_000;

export async function checkGatewayAuth(request: Request, env: Env, now = Date.now()): Promise<GatewayAuthResult> {
  const config = configFromEnv(env);
  const auth = config.gateway.auth;
  if (auth.mode === "none") return { ok: true };

  const limits = auth.rateLimit;
  const client = clientKey(request);
  const limited = !(limits.exemptLoopback && isLoopback(client));
  const state = limited ? attempts.get(client) : undefined;
  if (state && state.lockedUntil > now) return lockedOut(state.lockedUntil - now);

  const expected = expectedSecret(config, env);
  if (!expected) {
    return { ok: false, status: 401, code: "auth_not_configured", message: "Gateway auth is not configured: set gateway.auth.token or EDGECLAW_GATEWAY_TOKEN" };
  }
  const presented = bearerToken(request);
  if (presented !== undefined && (await constantTimeEqual(presented, expected))) return { ok: true };

  if (limited) recordFailure(client, now, limits);
  return presented === undefined
    ? { ok: false, status: 401, code: "missing_token", message: "Missing gateway token: send Authorization: Bearer <token>" }
    : { ok: false, status: 401, code: "invalid_token", message: "Invalid gateway token" };
}

/**
 * Hono middleware. Refusals use the OpenAI error shape `{ error: { message, type, code } }`, which
 * OpenAI clients parse and which reads fine as a plain JSON error elsewhere.
 */
export const requireGatewayToken: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const result = await checkGatewayAuth(c.req.raw, c.env);
  if (!result.ok) return gatewayAuthErrorResponse(result);
  await next();
};

export function gatewayAuthErrorResponse(result: Extract<GatewayAuthResult, { ok: false }>): Response {
  const headers: Record<string, string> = {};
  if (result.status === 401) headers["www-authenticate"] = 'Bearer realm="edgeclaw"';
  if (result.retryAfterSeconds !== undefined) headers["retry-after"] = String(result.retryAfterSeconds);
  const type = result.status === 429 ? "rate_limit_error" : "authentication_error";
  return Response.json({ error: { message: result.message, type, param: null, code: result.code } }, { status: result.status, headers });
}

function expectedSecret(config: EdgeclawConfig, env: Env): string | undefined {
  const auth = config.gateway.auth;
  if (auth.mode === "password") return resolveSecret(auth.password, env) ?? stringEnv(env.OPENCLAW_GATEWAY_PASSWORD);
  return resolveSecret(auth.token, env) ?? stringEnv(env.EDGECLAW_GATEWAY_TOKEN) ?? stringEnv(env.OPENCLAW_GATEWAY_TOKEN);
}

function stringEnv(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function bearerToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  return match ? match[1]!.trim() : undefined;
}

/** Compares SHA-256 digests in constant time, so neither content nor length leaks through timing. */
async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [left, right] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(left, right);
}

function clientKey(request: Request): string {
  return request.headers.get("cf-connecting-ip")?.trim() || "unknown";
}

function isLoopback(ip: string): boolean {
  return ip === "::1" || ip.startsWith("127.") || ip === "::ffff:127.0.0.1";
}

/** Counts a failure; reaching `maxAttempts` in one window locks the client out for `lockoutMs`. */
function recordFailure(client: string, now: number, limits: EdgeclawConfig["gateway"]["auth"]["rateLimit"]): void {
  let state = attempts.get(client);
  if (!state || now - state.windowStart >= limits.windowMs) {
    state = { failures: 0, windowStart: now, lockedUntil: 0 };
    if (attempts.size >= MAX_TRACKED_CLIENTS) attempts.delete(attempts.keys().next().value!);
    attempts.set(client, state);
  }
  state.failures += 1;
  if (state.failures >= limits.maxAttempts) state.lockedUntil = now + limits.lockoutMs;
}

function lockedOut(remainingMs: number): GatewayAuthResult {
  return {
    ok: false,
    status: 429,
    code: "rate_limited",
    message: "Too many failed authentication attempts; try again later",
    retryAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)),
  };
}
