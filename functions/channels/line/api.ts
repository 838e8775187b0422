import * as z from "zod";
import type { SendResult } from "../adapter.ts";
import { withTrailingSlash } from "./config.ts";

/**
 * One Messaging API call (JSON in, JSON out) and what its answer means to the outbox. Never retries
 * on its own: the outbox owns retries and honours Retry-After. Redirects are not followed, so the
 * access token never leaves the configured base URL.
 */

export interface LineApiTarget {
  apiBaseUrl: string;
  accessToken: string;
}

export type LineApiAnswer =
  | { ok: true; status: number; body: unknown; headers: Headers }
  | { ok: false; status: number; message: string; headers: Headers }
  /** No answer: the request may or may not have reached LINE. */
  | { ok: false; status: 0; message: string; unknown: true };

const errorBodySchema = z.object({ message: z.string().max(2000) }).loose();

export async function callLineApi(
  target: LineApiTarget,
  path: string,
  body: unknown,
  options: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<LineApiAnswer> {
  let response: Response;
  try {
    response = await fetch(`${withTrailingSlash(target.apiBaseUrl)}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${target.accessToken}`,
        ...options.headers,
      },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: options.signal,
    });
  } catch (error) {
    return {
      ok: false,
      status: 0,
      message: error instanceof Error ? error.message : String(error),
      unknown: true,
    };
  }
  const text = await response.text().catch(() => "");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (response.ok)
    return { ok: true, status: response.status, body: json, headers: response.headers };
  const parsed = errorBodySchema.safeParse(json);
  return {
    ok: false,
    status: response.status,
    message: parsed.success ? parsed.data.message : `HTTP ${response.status}`,
    headers: response.headers,
  };
}

/** Reply/push answers name the messages LINE sent; the first id stands for the chunk. */
export function firstSentMessageId(body: unknown): string | undefined {
  const parsed = z
    .object({ sentMessages: z.array(z.object({ id: z.string() }).loose()).min(1) })
    .loose()
    .safeParse(body);
  return parsed.success ? parsed.data.sentMessages[0]!.id : undefined;
}

/**
 * A failed call in the outbox's vocabulary. 429 waits (Retry-After when LINE sends one), except
 * the monthly message quota, which no wait within the outbox's bound would fix. A 5xx or no answer
 * at all waits too when a repeat is safe (`repeatable`: a push with its retry key, which LINE drops
 * if the first one went through); for a reply-token send, which LINE may have carried out despite
 * the error and which cannot be repeated safely, the outcome is unknown. Other 4xx are final (bad
 * token, blocked user, invalid message).
 */
export function sendResultFromAnswer(
  answer: Extract<LineApiAnswer, { ok: false }>,
  what: string,
  repeatable: boolean,
): Extract<SendResult, { ok: false }> {
  if ("unknown" in answer) {
    const error = `line ${what}: ${answer.message}`;
    return repeatable
      ? { ok: false, retryable: true, error }
      : { ok: false, outcomeUnknown: true, error };
  }
  const error = `line ${what}: HTTP ${answer.status} ${answer.message}`.slice(0, 300);
  if (answer.status === 429) {
    if (/monthly limit/i.test(answer.message)) return { ok: false, retryable: false, error };
    return { ok: false, retryable: true, retryAfterMs: retryAfterMs(answer.headers), error };
  }
  if (answer.status >= 500)
    return repeatable
      ? { ok: false, retryable: true, error }
      : { ok: false, outcomeUnknown: true, error };
  return { ok: false, retryable: false, error };
}

function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
