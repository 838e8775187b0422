import {
  classOfHttpStatus,
  OutcomeUnknownError,
  PermanentError,
  TransientError,
  type EdgeclawError,
} from "../../core/errors.ts";
import type { SendResult } from "../adapter.ts";

/**
 * One Graph API call (JSON in, JSON out), a failure being one of the typed errors of
 * functions/core/errors.ts decided by Meta's numeric error `code` and the HTTP status, never by
 * the message text (Meta: "build your app's error handling logic around code values"). Never
 * retries on its own: the outbox does. Redirects are not followed, so the access token never leaves
 * the configured Graph origin.
 */

export type GraphAnswer = { ok: true; body: unknown } | { ok: false; error: EdgeclawError };

/**
 * The same request can succeed later: Meta's throttling codes (4 app rate limit, 80007 account
 * rate limit, 130429 throughput reached, 131048 spam rate limit, 131056 pair rate limit) and its
 * "try again later" codes (1, 2, 131000 something went wrong, 131016 service unavailable, 133004
 * server temporarily unavailable), whatever HTTP status they come with. They are Meta's own answer
 * that nothing was sent, so a repeat is no duplicate.
 */
const TRANSIENT_CODES = [4, 80007, 130429, 131048, 131056, 1, 2, 131000, 131016, 133004];

export async function callGraph(
  url: string,
  token: string,
  signal: AbortSignal | undefined,
  body?: unknown,
): Promise<GraphAnswer> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: body ? "POST" : "GET",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body ? JSON.stringify(body) : undefined,
      redirect: "manual",
      signal,
    });
  } catch (cause) {
    // No answer: the request may or may not have reached Meta.
    return { ok: false, error: new OutcomeUnknownError(`whatsapp cloud: ${cause}`, { cause }) };
  }
  const json: unknown = await response.json().catch(() => undefined);
  return response.ok
    ? { ok: true, body: json }
    : { ok: false, error: graphError(response.status, json, response.headers) };
}

/** A failed answer's class: Meta's code first (or its `is_transient`), then the HTTP status. */
export function graphError(status: number, body: unknown, headers: Headers): EdgeclawError {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  const message = `whatsapp cloud: HTTP ${status} code ${error?.code}: ${error?.message}`.slice(
    0,
    300,
  );
  const seconds = Number(headers.get("retry-after") ?? Number.NaN);
  // A gateway's page instead of Meta's answer: the request may have passed on to Meta.
  if (!error && (status === 502 || status === 504)) return new OutcomeUnknownError(message);
  return TRANSIENT_CODES.includes(error?.code as number) ||
    error?.is_transient === true ||
    classOfHttpStatus(status) === "transient"
    ? new TransientError(message, seconds >= 0 ? { retryAfterMs: seconds * 1000 } : {})
    : new PermanentError(message);
}

/** A typed error in the outbox's vocabulary. */
export function sendResultOf(error: EdgeclawError): Extract<SendResult, { ok: false }> {
  return error.errorClass === "outcome-unknown"
    ? { ok: false, outcomeUnknown: true, error: error.message }
    : {
        ok: false,
        retryable: error.errorClass === "transient",
        retryAfterMs: error.retryAfterMs,
        error: error.message,
      };
}
