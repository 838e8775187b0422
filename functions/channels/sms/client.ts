import type { SendResult } from "../adapter.ts";

/**
 * The Twilio REST API (api.twilio.com/2010-04-01), by plain fetch with HTTP Basic auth
 * (`AccountSid:AuthToken`). The `twilio` npm package would add ~536 KiB gzipped to the Worker for
 * the two calls made here; it serves as the test oracle instead.
 */
export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** Origin of the REST API (`https://api.twilio.com`, or a proxy / the local fake). */
  apiBaseUrl: string;
}

export function basicAuth(
  credentials: Pick<TwilioCredentials, "accountSid" | "authToken">,
): string {
  const bytes = new TextEncoder().encode(`${credentials.accountSid}:${credentials.authToken}`);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** `/2010-04-01/Accounts/{Sid}/Messages.json` under the configured base URL. */
export function messagesUrl(credentials: TwilioCredentials): URL {
  return apiUrl(
    credentials,
    `/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}/Messages.json`,
  );
}

/** A path Twilio returned (`next_page_uri`) or built here, always on the configured API origin. */
export function apiUrl(credentials: TwilioCredentials, pathAndQuery: string): URL {
  const base = new URL(credentials.apiBaseUrl);
  const prefix = base.pathname.replace(/\/+$/, "");
  return new URL(`${prefix}${pathAndQuery.startsWith("/") ? "" : "/"}${pathAndQuery}`, base.origin);
}

/** Twilio's error body: `{ code, message, more_info, status }`. */
async function errorText(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const parsed = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof parsed.code === "number" || typeof parsed.message === "string")
      return `twilio ${response.status} (${String(parsed.code ?? "?")}): ${String(parsed.message ?? "")}`.slice(
        0,
        300,
      );
  } catch {
    // not JSON: a proxy's page
  }
  return `twilio http ${response.status}`;
}

/**
 * Maps a Messages create answer to the outbox's vocabulary. 429 and 500/503 did not create the
 * message: retry (honouring Retry-After when given). 502/504 come from a gateway that may have
 * passed the request on: reconcile, never repeat blindly. Other 4xx are final (bad number,
 * unsubscribed recipient 21610, bad credentials).
 */
export async function sendResultFromResponse(response: Response): Promise<SendResult> {
  if (response.ok) {
    const body = (await response.json().catch(() => ({}))) as { sid?: unknown };
    return { ok: true, ...(typeof body.sid === "string" ? { platformMessageId: body.sid } : {}) };
  }
  const error = await errorText(response);
  if (response.status === 429) {
    const seconds = Number(response.headers.get("retry-after"));
    return {
      ok: false,
      retryable: true,
      ...(Number.isFinite(seconds) && seconds > 0 ? { retryAfterMs: seconds * 1000 } : {}),
      error,
    };
  }
  if (response.status === 502 || response.status === 504)
    return { ok: false, outcomeUnknown: true, error };
  return { ok: false, retryable: response.status >= 500, error };
}
