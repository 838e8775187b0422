import * as z from "zod";
import type { SendResult } from "../adapter.ts";
import { feishuApiBase, type FeishuAccount } from "./config.ts";

/**
 * Calls to the Feishu / Lark Open Platform with a tenant access token
 * (POST open-apis/auth/v3/tenant_access_token/internal {app_id, app_secret} → {code: 0,
 * tenant_access_token, expire}). Tokens are cached per isolate and app, and renewed well before they
 * expire (Feishu issues a fresh one once less than 30 minutes remain; the old one stays valid). An
 * answer saying the token is invalid drops it from the cache and the call is made once more.
 *
 * Feishu reports most failures as HTTP 200/400 with a non-zero `code`: the frequency limits
 * (99991400, 230020 per chat, 11232 per tenant, or HTTP 429) are retryable after a wait.
 */

export interface FeishuCredentials {
  appId: string;
  appSecret: string;
}

interface CachedToken {
  token: string;
  refreshAt: number;
}

const tokens = new Map<string, CachedToken>();
const pending = new Map<string, Promise<CachedToken | { error: string; retryable: boolean }>>();

/** Codes that mean "this token is not (or no longer) accepted". */
export const TOKEN_INVALID_CODES: ReadonlySet<number> = new Set([
  99991661, 99991663, 99991664, 99991665, 99991668, 99991677,
]);
/** Frequency-limit codes: wait and repeat. */
export const RATE_LIMIT_CODES: ReadonlySet<number> = new Set([99991400, 99991403, 230020, 11232]);

const tokenAnswerSchema = z
  .object({
    code: z.number(),
    msg: z.string().optional(),
    tenant_access_token: z.string().optional(),
    expire: z.number().optional(),
  })
  .loose();
const apiAnswerSchema = z
  .object({ code: z.number(), msg: z.string().optional(), data: z.unknown().optional() })
  .loose();

function cacheKey(account: FeishuAccount, credentials: FeishuCredentials): string {
  return `${feishuApiBase(account)}|${credentials.appId}`;
}

async function tenantToken(
  account: FeishuAccount,
  credentials: FeishuCredentials,
  signal?: AbortSignal,
): Promise<CachedToken | { error: string; retryable: boolean }> {
  const key = cacheKey(account, credentials);
  const cached = tokens.get(key);
  if (cached && Date.now() < cached.refreshAt) return cached;
  const inFlight = pending.get(key);
  if (inFlight) return inFlight;
  const request = (async () => {
    let response: Response;
    try {
      response = await fetch(
        `${feishuApiBase(account)}open-apis/auth/v3/tenant_access_token/internal`,
        {
          method: "POST",
          headers: { "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify({ app_id: credentials.appId, app_secret: credentials.appSecret }),
          redirect: "manual",
          signal,
        },
      );
    } catch (error) {
      return {
        error: `tenant_access_token: ${error instanceof Error ? error.message : String(error)}`,
        retryable: true,
      };
    }
    const answer = tokenAnswerSchema.safeParse(await response.json().catch(() => undefined));
    if (!answer.success || answer.data.code !== 0 || !answer.data.tenant_access_token) {
      const code = answer.success ? answer.data.code : undefined;
      const retryable =
        response.status === 429 ||
        response.status >= 500 ||
        (code !== undefined && RATE_LIMIT_CODES.has(code));
      return {
        error:
          `tenant_access_token: HTTP ${response.status} code ${code ?? "?"} ${answer.success ? (answer.data.msg ?? "") : ""}`.trim(),
        retryable,
      };
    }
    const lifetimeMs = Math.max(60, answer.data.expire ?? 7200) * 1000;
    const entry = {
      token: answer.data.tenant_access_token,
      refreshAt: Date.now() + lifetimeMs - Math.min(30 * 60_000, lifetimeMs / 2),
    };
    tokens.set(key, entry);
    return entry;
  })();
  pending.set(key, request);
  try {
    return await request;
  } finally {
    pending.delete(key);
  }
}

export type FeishuAnswer =
  | { ok: true; data: unknown; headers: Headers }
  | {
      ok: false;
      status: number;
      code?: number;
      message: string;
      headers?: Headers;
      unknown?: true;
      tokenError?: true;
    };

/**
 * One API call with the tenant token: `path` under the account's base (e.g. "open-apis/im/v1/messages").
 * A refused token is refreshed and the call made once more.
 */
export async function callFeishuApi(
  account: FeishuAccount,
  credentials: FeishuCredentials,
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<FeishuAnswer> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const token = await tenantToken(account, credentials, signal);
    if ("error" in token)
      return {
        ok: false,
        status: token.retryable ? 503 : 401,
        message: token.error,
        tokenError: true,
      };
    let response: Response;
    try {
      // An upload (im/v1/files, im/v1/images) is multipart; the form sets its own content type.
      const form = body instanceof FormData;
      response = await fetch(`${feishuApiBase(account)}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token.token}`,
          ...(body === undefined || form
            ? {}
            : { "content-type": "application/json; charset=utf-8" }),
        },
        body: body === undefined ? undefined : form ? body : JSON.stringify(body),
        redirect: "manual",
        signal,
      });
    } catch (error) {
      return {
        ok: false,
        status: 0,
        message: error instanceof Error ? error.message : String(error),
        unknown: true,
      };
    }
    const parsed = apiAnswerSchema.safeParse(await response.json().catch(() => undefined));
    const code = parsed.success ? parsed.data.code : undefined;
    if (response.ok && code === 0)
      return {
        ok: true,
        data: parsed.success ? parsed.data.data : undefined,
        headers: response.headers,
      };
    if (code !== undefined && TOKEN_INVALID_CODES.has(code) && attempt === 0) {
      // Revoked or expired early: forget it and ask for a new one, once.
      tokens.delete(cacheKey(account, credentials));
      continue;
    }
    return {
      ok: false,
      status: response.status,
      code,
      message: parsed.success ? (parsed.data.msg ?? "") : `HTTP ${response.status}`,
      headers: response.headers,
    };
  }
  return { ok: false, status: 401, message: "tenant access token refused twice" };
}

/**
 * A failed call in the outbox's vocabulary. Sends carry a `uuid` Feishu deduplicates for an hour, so
 * a send with no answer, a 5xx or a frequency limit is simply repeated (`retryable`).
 */
export function sendResultFromAnswer(
  answer: Extract<FeishuAnswer, { ok: false }>,
  what: string,
): Extract<SendResult, { ok: false; retryable: boolean }> {
  const error =
    `feishu ${what}: HTTP ${answer.status}${answer.code !== undefined ? ` code ${answer.code}` : ""} ${answer.message}`
      .trim()
      .slice(0, 300);
  if (answer.unknown) return { ok: false, retryable: true, error };
  const limited =
    answer.status === 429 || (answer.code !== undefined && RATE_LIMIT_CODES.has(answer.code));
  if (limited)
    return { ok: false, retryable: true, retryAfterMs: retryAfterMs(answer.headers), error };
  if (answer.status >= 500) return { ok: false, retryable: true, error };
  return { ok: false, retryable: false, error };
}

/** Feishu's gateway names the reset in `x-ogw-ratelimit-reset` (seconds); Retry-After where sent. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const value = headers?.get("x-ogw-ratelimit-reset") ?? headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 3600) * 1000 : undefined;
}

/** For tests: forget every cached token. */
export function forgetFeishuTokens(): void {
  tokens.clear();
}

/** A raw GET with the tenant token (resource downloads); the caller has checked the URL. */
export async function fetchWithTenantToken(
  account: FeishuAccount,
  credentials: FeishuCredentials,
  url: URL,
  signal?: AbortSignal,
): Promise<Response | { skipped: string }> {
  const token = await tenantToken(account, credentials, signal);
  if ("error" in token) return { skipped: token.error };
  try {
    return await fetch(url, {
      headers: { authorization: `Bearer ${token.token}` },
      redirect: "manual",
      signal,
    });
  } catch (error) {
    return {
      skipped: `download failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
