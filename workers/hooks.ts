import { Hono, type Context } from "hono";
import type { Env } from "./env.ts";
import { configFromEnv } from "../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../functions/config/schema.ts";
import { resolveSecret } from "../functions/config/secret-ref.ts";
import { readBodyCapped } from "../functions/http/read-body.ts";
import { decideHook, type HookAction } from "../functions/automation/hook-request.ts";
import { hookAgentEvent, systemEventFor } from "../durable-objects/scheduler/events.ts";
import { schedulerStub } from "../durable-objects/scheduler-stub.ts";
import { addressBucket, clientAddress } from "./client-address.ts";
import { sessionStub } from "./ingest.ts";

/**
 * Inbound hooks under `hooks.path` (default /hooks): `POST /hooks/wake`, `POST /hooks/agent`,
 * `POST /hooks/<mapping>`. Order: the hooks token (Authorization: Bearer or x-openclaw-token;
 * never a query string; constant-time; 20 failures per minute per client address lock it out for
 * a minute, counted in a Durable Object) → body cap → parse → the event stored durably in its
 * session → 200. A caller's idempotency key makes a retried call the same stored event.
 */
export const hooks = new Hono<{ Bindings: Env }>();

hooks.use("*", async (c, next) => {
  const config = configFromEnv(c.env);
  const prefix = `${config.hooks.path.replace(/\/+$/, "")}/`;
  const path = new URL(c.req.url).pathname;
  if (!path.startsWith(prefix)) return next();
  if (!config.hooks.enabled) return next();
  if (c.req.method !== "POST")
    return c.json({ ok: false, error: "method not allowed" }, 405, { allow: "POST" });
  return handleHook(c, config, path.slice(prefix.length));
});

async function handleHook(
  c: Context<{ Bindings: Env }>,
  config: EdgeclawConfig,
  name: string,
): Promise<Response> {
  const url = new URL(c.req.url);
  if (url.searchParams.has("token"))
    return c.json(
      {
        ok: false,
        error:
          "hook tokens are not accepted in the query string; send Authorization: Bearer <token>",
      },
      400,
    );
  const auth = await authenticate(c.req.raw, c.env, config);
  if (!auth.ok)
    return c.json(
      { ok: false, error: auth.error },
      auth.status,
      auth.retryAfterSeconds ? { "retry-after": String(auth.retryAfterSeconds) } : {},
    );

  const body = await readBodyCapped(c.req.raw, config.hooks.maxBodyBytes);
  if (!body.ok) return c.json({ ok: false, error: body.error }, 413);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    return c.json({ ok: false, error: "body must be JSON" }, 400);
  }
  const decision = decideHook(config, name, json);
  if (!decision.ok) return c.json({ ok: false, error: decision.error }, decision.status);
  const headerKey = c.req.header("idempotency-key") ?? c.req.header("x-openclaw-idempotency-key");
  return act(c, decision.action, headerKey?.trim().slice(0, 256) || undefined);
}

async function act(
  c: Context<{ Bindings: Env }>,
  action: HookAction,
  headerKey: string | undefined,
): Promise<Response> {
  const now = Date.now();
  if (action.kind === "wake") {
    const key = headerKey ? await digest(headerKey) : crypto.randomUUID();
    const event = systemEventFor(
      action.agentId,
      action.text,
      `hook:wake:${action.agentId}:${key}`,
      "hook",
      now,
    );
    const stored = await sessionStub(c.env, event.sessionKey).accept(event);
    // The event is stored; the beat that reads it now is best effort (the next one reads it anyway).
    if (action.now && stored.status === "accepted") {
      await schedulerStub(c.env)
        .wake(action.agentId, `hook:${key}`)
        .catch((error: unknown) =>
          console.warn(
            "hook wake: heartbeat not started",
            error instanceof Error ? error.message : error,
          ),
        );
    }
    return c.json({
      ok: true,
      mode: action.now ? "now" : "next-heartbeat",
      duplicate: stored.status === "duplicate",
    });
  }
  const idempotencyKey = headerKey ?? action.idempotencyKey;
  const id = idempotencyKey ? await digest(idempotencyKey) : crypto.randomUUID();
  const event = hookAgentEvent(action, id, now);
  const stored = await sessionStub(c.env, event.sessionKey).accept(event);
  return c.json({
    ok: true,
    runId: event.envelope.dedupKey,
    sessionKey: event.sessionKey,
    duplicate: stored.status === "duplicate",
  });
}

type AuthResult =
  | { ok: true }
  | { ok: false; status: 401 | 429 | 503; error: string; retryAfterSeconds?: number };

async function authenticate(
  request: Request,
  env: Env,
  config: EdgeclawConfig,
): Promise<AuthResult> {
  const expected = resolveSecret(config.hooks.token, env);
  if (!expected) return { ok: false, status: 401, error: "hooks.token is not configured" };
  const header = request.headers.get("authorization");
  const bearer = header ? /^Bearer\s+(.+)$/i.exec(header.trim())?.[1]?.trim() : undefined;
  const presented = bearer ?? request.headers.get("x-openclaw-token")?.trim();
  const bucket = `hooks:${addressBucket(clientAddress(request))}`;
  const limits = {
    maxAttempts: config.hooks.maxFailedAuth,
    windowMs: config.hooks.failedAuthWindowSeconds * 1000,
    lockoutMs: config.hooks.lockoutSeconds * 1000,
  };
  const matches = presented !== undefined && (await constantTimeEqual(presented, expected));
  let verdict;
  try {
    const limiter = env.AUTH_LIMITER.get(env.AUTH_LIMITER.idFromName(bucket));
    verdict = matches ? await limiter.admit() : await limiter.fail(limits);
  } catch {
    return {
      ok: false,
      status: 503,
      error: "authentication is temporarily unavailable",
      retryAfterSeconds: 1,
    };
  }
  if (verdict.locked)
    return {
      ok: false,
      status: 429,
      error: "too many failed hook authentications; try again later",
      retryAfterSeconds: Math.max(1, Math.ceil((verdict.retryAfterMs ?? limits.lockoutMs) / 1000)),
    };
  return matches
    ? { ok: true }
    : {
        ok: false,
        status: 401,
        error: presented === undefined ? "missing hook token" : "invalid hook token",
      };
}

async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [left, right] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(left, right);
}

/** A caller's idempotency key, hashed: it names a session and an event, so it is bounded and opaque. */
async function digest(key: string): Promise<string> {
  const bytes = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)),
  );
  return [...bytes.slice(0, 16)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
