import {
  WebClient,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
} from "@slack/web-api";
import type { SendResult } from "../adapter.ts";

/**
 * @slack/web-api clients, one per (token, base URL), kept for the isolate's life. Configured for
 * workerd and for an outbox that owns retries:
 * - `redirect: "manual"`: the SDK asks fetch for `redirect: "error"`, which workerd rejects;
 * - `retries: 0` and `rejectRateLimitedCalls`: the SDK would otherwise sleep through a 429 and
 *   retry blindly, which is how duplicate posts happen; a 429 comes back to the outbox with its
 *   Retry-After instead.
 */
const clients = new Map<string, WebClient>();

export function slackClient(token: string, apiBaseUrl: string): WebClient {
  const base = apiBaseUrl.endsWith("/") ? apiBaseUrl : `${apiBaseUrl}/`;
  const key = `${base}\u0000${token}`;
  let client = clients.get(key);
  if (!client) {
    client = new WebClient(token, {
      slackApiUrl: base,
      fetch: (url, init) => fetch(url, { ...init, redirect: "manual" }),
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      // Never let an absolute "method" URL escape the configured base.
      allowAbsoluteUrls: false,
    });
    if (clients.size > 64) clients.clear();
    clients.set(key, client);
  }
  return client;
}

/** Platform errors after which a resend can succeed. Everything else is final (bad channel, no scope, …). */
const RETRYABLE_PLATFORM_ERRORS = new Set([
  "ratelimited",
  "rate_limited",
  "internal_error",
  "fatal_error",
  "service_unavailable",
  "request_timeout",
]);

/**
 * Maps a failed Web API call to the outbox's vocabulary. A request that may have reached Slack
 * (connection reset, timeout) is `outcomeUnknown`: it must be reconciled, not repeated.
 */
export function sendResultFromError(error: unknown): Extract<SendResult, { ok: false }> {
  if (error instanceof WebAPIRateLimitedError) {
    return {
      ok: false,
      retryable: true,
      retryAfterMs: Math.max(0, error.retryAfter) * 1000,
      error: "rate limited (429)",
    };
  }
  if (error instanceof WebAPIPlatformError) {
    const code = error.data.error;
    return { ok: false, retryable: RETRYABLE_PLATFORM_ERRORS.has(code), error: `slack: ${code}` };
  }
  if (error instanceof WebAPIHTTPError) {
    // Slack answers 200 for everything it processed; a 5xx from it (or a proxy) did not post.
    return {
      ok: false,
      retryable: error.statusCode >= 500,
      error: `slack http ${error.statusCode}`,
    };
  }
  if (error instanceof WebAPIRequestError)
    return {
      ok: false,
      outcomeUnknown: true,
      error: `slack request failed: ${error.original.message}`,
    };
  return {
    ok: false,
    outcomeUnknown: true,
    error: error instanceof Error ? error.message : String(error),
  };
}

export function platformErrorCode(error: unknown): string | undefined {
  return error instanceof WebAPIPlatformError ? error.data.error : undefined;
}
