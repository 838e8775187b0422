import type { MiddlewareHandler } from "hono";
import { createLogger } from "../functions/logging/logger.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../functions/config/schema.ts";
import { resolveSecret } from "../functions/config/secret-ref.ts";
import type { AuthVerdict } from "../durable-objects/rpc.ts";
import { addressBucket, clientAddress, isLoopback } from "./client-address.ts";
import type { Env } from "./env.ts";

/**
 * The gateway credential check shared by every operator surface (OpenAI-compatible API, web chat,
 * admin API). A valid `Authorization: Bearer <token>` is full operator access, as in OpenClaw.
 *
 * - `gateway.auth.mode: "none"` disables the check (private ingress only).
 * - mode "password": `gateway.auth.password` or OPENCLAW_GATEWAY_PASSWORD.
 * - otherwise the token: `gateway.auth.token` (SecretInput), else EDGECLAW_GATEWAY_TOKEN, else
 *   OPENCLAW_GATEWAY_TOKEN. No credential configured → every request is refused (fail closed).
 * - Wrong credentials are limited per client address bucket by `gateway.auth.rateLimit` (default 10
 *   per 60 s, then 5 min → 429 with Retry-After). The count lives in one AuthLimiterDO per bucket
 *   (durable-objects/auth-limiter.ts), so it holds across isolates and restarts. As in OpenClaw, a
 *   missing credential does not count, a right one clears the count, and loopback is exempt by
 *   default. A right credential is also refused while its bucket is locked out — otherwise a guesser
 *   would simply ignore the 429s — so a request that presents a credential costs one call to that
 *   object; requests without one, from exempt addresses, or with auth off cost none, and a lockout
 *   this isolate has seen is answered from memory until it ends.
 */

export type GatewayAuthResult =
  | { ok: true }
  | {
      ok: false;
      status: 401 | 429 | 503;
      code:
        | "missing_token"
        | "invalid_token"
        | "auth_not_configured"
        | "rate_limited"
        | "auth_unavailable";
      message: string;
      retryAfterSeconds?: number;
    };

/** Lockouts this isolate has been told about (bucket → until); a cache of the object's answer, never the source. */
const knownLockouts = new Map<string, number>();
const MAX_KNOWN_LOCKOUTS = 10_000;

export async function checkGatewayAuth(request: Request, env: Env): Promise<GatewayAuthResult> {
  const config = configFromEnv(env);
  const auth = config.gateway.auth;
  if (auth.mode === "none") return { ok: true };

  const expected = expectedSecret(config, env);
  if (!expected) {
    return {
      ok: false,
      status: 401,
      code: "auth_not_configured",
      message: "Gateway auth is not configured: set gateway.auth.token or EDGECLAW_GATEWAY_TOKEN",
    };
  }
  const presented = bearerToken(request);
  if (presented === undefined)
    return {
      ok: false,
      status: 401,
      code: "missing_token",
      message: "Missing gateway token: send Authorization: Bearer <token>",
    };

  const address = clientAddress(request);
  const limited = !(auth.rateLimit.exemptLoopback && isLoopback(address));
  const bucket = addressBucket(address);
  const lockedUntil = limited ? knownLockouts.get(bucket) : undefined;
  if (lockedUntil !== undefined) {
    if (lockedUntil > Date.now()) return lockedOut(lockedUntil - Date.now());
    knownLockouts.delete(bucket);
  }

  const matches = await constantTimeEqual(presented, expected);
  if (limited) {
    const { maxAttempts, windowMs, lockoutMs } = auth.rateLimit;
    let verdict: AuthVerdict;
    try {
      const limiter = env.AUTH_LIMITER.get(env.AUTH_LIMITER.idFromName(bucket));
      verdict = matches
        ? await limiter.admit()
        : await limiter.fail(
            { maxAttempts, windowMs, lockoutMs },
            { bucket, path: new URL(request.url).pathname },
          );
    } catch (error) {
      // Fail closed: without the counter, neither a right nor a wrong credential is judged.
      createLogger(config, env).error("gateway auth: the failed-auth limiter is unreachable", {
        error,
      });
      return {
        ok: false,
        status: 503,
        code: "auth_unavailable",
        message: "Authentication is temporarily unavailable; retry shortly",
        retryAfterSeconds: 1,
      };
    }
    if (verdict.retryAfterMs !== undefined)
      rememberLockout(bucket, Date.now() + verdict.retryAfterMs);
    if (verdict.locked) return lockedOut(verdict.retryAfterMs ?? lockoutMs);
  }
  return matches
    ? { ok: true }
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

export function gatewayAuthErrorResponse(
  result: Extract<GatewayAuthResult, { ok: false }>,
): Response {
  const headers: Record<string, string> = {};
  if (result.status === 401) headers["www-authenticate"] = 'Bearer realm="edgeclaw"';
  if (result.retryAfterSeconds !== undefined)
    headers["retry-after"] = String(result.retryAfterSeconds);
  const type =
    result.status === 429
      ? "rate_limit_error"
      : result.status === 503
        ? "api_error"
        : "authentication_error";
  return Response.json(
    { error: { message: result.message, type, param: null, code: result.code } },
    { status: result.status, headers },
  );
}

function expectedSecret(config: EdgeclawConfig, env: Env): string | undefined {
  const auth = config.gateway.auth;
  if (auth.mode === "password")
    return resolveSecret(auth.password, env) ?? stringEnv(env.OPENCLAW_GATEWAY_PASSWORD);
  return (
    resolveSecret(auth.token, env) ??
    stringEnv(env.EDGECLAW_GATEWAY_TOKEN) ??
    stringEnv(env.OPENCLAW_GATEWAY_TOKEN)
  );
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

function rememberLockout(bucket: string, until: number): void {
  if (knownLockouts.size >= MAX_KNOWN_LOCKOUTS)
    knownLockouts.delete(knownLockouts.keys().next().value!);
  knownLockouts.set(bucket, until);
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
