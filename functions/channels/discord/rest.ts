import * as z from "zod";
import type { SendResult } from "../adapter.ts";
import { heldFor, rateLimitKey, recordRateLimit } from "./rate-limits.ts";

/**
 * One Discord REST call (https://discord.com/developers/docs/reference): `Authorization: Bot <token>`
 * (or none, for interaction webhooks whose token is in the path), JSON in and out. No retries here:
 * the outbox owns them. A 429 carries `retry_after` (seconds, fractional) in its body and
 * `Retry-After` / `X-RateLimit-Reset-After` headers, per bucket (`X-RateLimit-Bucket`) or global.
 * A call that may have reached Discord but whose answer was lost is `lost`, never "did not happen".
 * A call on a bucket known to be empty is not made at all (rate-limits.ts): it comes back as a 429
 * marked `heldBack`, to be waited out like a real one.
 */
export type DiscordResult<T> =
  | { ok: true; status: number; result: T }
  | {
      ok: false;
      kind: "refused";
      status: number;
      code?: number;
      message: string;
      retryAfterMs?: number;
      bucket?: string;
      heldBack?: true;
    }
  | { ok: false; kind: "lost"; error: string };

const errorSchema = z
  .object({
    code: z.number().int().optional(),
    message: z.string().optional(),
    retry_after: z.number().optional(),
    global: z.boolean().optional(),
  })
  .loose();

export interface DiscordCall {
  base: string;
  /** Bot token; omitted for interaction webhooks (`/webhooks/<app>/<interaction token>`). */
  token?: string;
  signal?: AbortSignal;
}

export async function discordRequest<T = unknown>(
  call: DiscordCall,
  method: string,
  path: string,
  body?: unknown,
): Promise<DiscordResult<T>> {
  const limitKey = rateLimitKey(call.token, method, path);
  const held = heldFor(limitKey);
  if (held.waitMs > 0) {
    return {
      ok: false,
      kind: "refused",
      status: 429,
      message: `held back: bucket ${held.bucket} is empty until it resets`,
      retryAfterMs: held.waitMs,
      bucket: held.bucket ?? "?",
      heldBack: true,
    };
  }
  let response: Response;
  // A file upload is multipart (payload_json + files[n]); the form sets its own content type.
  const form = body instanceof FormData;
  try {
    response = await fetch(`${call.base}${path}`, {
      method,
      headers: {
        ...(call.token ? { authorization: `Bot ${call.token}` } : {}),
        ...(body !== undefined && !form ? { "content-type": "application/json" } : {}),
        "user-agent": "DiscordBot (https://github.com/edgeclaw, 1)",
      },
      ...(body !== undefined ? { body: form ? body : JSON.stringify(body) } : {}),
      redirect: "manual",
      signal: call.signal,
    });
  } catch (error) {
    return {
      ok: false,
      kind: "lost",
      error: `${method} ${routeOf(path)}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (response.status === 204) {
    recordRateLimit(limitKey, response.headers, 204, undefined);
    return { ok: true, status: 204, result: undefined as T };
  }
  const text = await response.text().catch(() => undefined);
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  recordRateLimit(
    limitKey,
    response.headers,
    response.status,
    response.status === 429 ? errorSchema.safeParse(json).data : undefined,
  );
  if (response.ok) {
    if (json === undefined && method !== "GET")
      return {
        ok: false,
        kind: "lost",
        error: `${method} ${routeOf(path)}: unreadable answer (HTTP ${response.status})`,
      };
    return { ok: true, status: response.status, result: json as T };
  }
  const error = errorSchema.safeParse(json).data;
  const retryAfterSeconds =
    error?.retry_after ??
    numberHeader(response, "retry-after") ??
    numberHeader(response, "x-ratelimit-reset-after");
  const bucket =
    response.headers.get("x-ratelimit-bucket") ?? (error?.global ? "global" : undefined);
  return {
    ok: false,
    kind: "refused",
    status: response.status,
    ...(error?.code !== undefined ? { code: error.code } : {}),
    message: error?.message ?? `HTTP ${response.status}`,
    ...(response.status === 429 && retryAfterSeconds !== undefined
      ? { retryAfterMs: Math.max(1, Math.ceil(retryAfterSeconds * 1000)) }
      : {}),
    ...(bucket ? { bucket } : {}),
  };
}

function numberHeader(response: Response, name: string): number | undefined {
  const value = Number(response.headers.get(name));
  return response.headers.has(name) && Number.isFinite(value) ? value : undefined;
}

/** The path without ids or tokens, for errors and logs (an interaction token is a credential). */
function routeOf(path: string): string {
  return path.replace(/\/webhooks\/(\d+)\/[^/?]+/, "/webhooks/$1/…").replace(/\?.*$/, "");
}

/**
 * A failed call in the outbox's vocabulary: 429 waits `retry_after` (its bucket named in the error);
 * 5xx retried; other 4xx (missing access, unknown channel, bad request) are final; a lost answer is
 * reconciled, never repeated blindly.
 */
export function sendResultFromFailure(
  failure: Extract<DiscordResult<unknown>, { ok: false }>,
): Extract<SendResult, { ok: false }> {
  if (failure.kind === "lost") return { ok: false, outcomeUnknown: true, error: failure.error };
  const error =
    `discord ${failure.status}${failure.code !== undefined ? `/${failure.code}` : ""}: ${failure.message}${failure.bucket ? ` (bucket ${failure.bucket})` : ""}`.slice(
      0,
      300,
    );
  if (failure.heldBack)
    return {
      ok: false,
      retryable: true,
      retryAfterMs: failure.retryAfterMs ?? 1000,
      error,
      notSent: true,
    };
  if (failure.status === 429)
    return { ok: false, retryable: true, retryAfterMs: failure.retryAfterMs ?? 1000, error };
  return { ok: false, retryable: failure.status >= 500, error };
}

/** Discord's epoch (2015-01-01) in ms: snowflakes carry ms since then in their top 42 bits. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** The smallest snowflake created at `ms` (for `?after=` history reads). */
export function snowflakeAt(ms: number): string {
  const since = BigInt(Math.max(0, Math.floor(ms))) - DISCORD_EPOCH;
  return String((since < 0n ? 0n : since) << 22n);
}
