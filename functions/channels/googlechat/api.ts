import * as z from "zod";
import type { SendResult } from "../adapter.ts";
import type { SendContext } from "../adapter.ts";
import {
  googleChatServiceAccount,
  withTrailingSlash,
  type GoogleChatAccount,
  type ServiceAccountKey,
} from "./config.ts";
import { chatAccessToken, forgetChatAccessToken } from "./token.ts";

/**
 * One Chat API call with the account's app token, and what its answer means to the outbox. Never
 * retries on its own (the outbox does); redirects are not followed, so the token never leaves the
 * configured `apiBaseUrl`.
 */

export interface ChatApiTarget {
  account: GoogleChatAccount;
  key: ServiceAccountKey;
}

export type ChatApiAnswer =
  | { ok: true; status: number; body: unknown }
  | { ok: false; status: number; message: string; headers: Headers }
  /** No answer at all (network): the request may or may not have reached Google. */
  | { ok: false; status: 0; message: string; unknown: true }
  /** No token: nothing was sent. */
  | { ok: false; status: -1; message: string; retryable: boolean };

const errorSchema = z
  .object({
    error: z
      .object({ message: z.string().max(2000).optional(), status: z.string().optional() })
      .loose(),
  })
  .loose();

/** The account the pipeline resolved for the call (the route's), with its service account key. */
export function chatTarget(ctx: SendContext<GoogleChatAccount>): ChatApiTarget | { error: string } {
  const account = ctx.account;
  if (!account) return { error: "channels.googlechat is not configured" };
  const key = googleChatServiceAccount(account, ctx.env);
  return "error" in key ? { error: key.error } : { account, key: key.key };
}

export async function callChatApi(
  target: ChatApiTarget,
  method: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<ChatApiAnswer> {
  const token = await chatAccessToken(target.key, target.account.tokenUrl, signal);
  if (!token.ok) return { ok: false, status: -1, message: token.error, retryable: token.retryable };
  let response: Response;
  try {
    response = await fetch(`${withTrailingSlash(target.account.apiBaseUrl)}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
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
  const text = await response.text().catch(() => "");
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (response.ok) return { ok: true, status: response.status, body: json };
  // A token Google no longer takes: drop it, so the retry fetches a new one.
  if (response.status === 401) forgetChatAccessToken(target.key, target.account.tokenUrl);
  const parsed = errorSchema.safeParse(json);
  const message = parsed.success
    ? [parsed.data.error.status, parsed.data.error.message].filter(Boolean).join(": ")
    : `HTTP ${response.status}`;
  return {
    ok: false,
    status: response.status,
    message: message || `HTTP ${response.status}`,
    headers: response.headers,
  };
}

/**
 * A failed call in the outbox's vocabulary. Every Chat send carries a client-assigned message id,
 * so a repeat is harmless (Google answers ALREADY_EXISTS) and no failure is an unknown outcome:
 * 429, 5xx, 401 (token refreshed next time) and no answer at all wait and retry; other 4xx are final.
 */
export function chatSendFailure(
  answer: Extract<ChatApiAnswer, { ok: false }>,
  what: string,
): Extract<SendResult, { ok: false }> {
  if ("retryable" in answer)
    return {
      ok: false,
      retryable: answer.retryable,
      error: `googlechat ${what}: ${answer.message}`,
    };
  const error =
    `googlechat ${what}: ${answer.status ? `HTTP ${answer.status} ` : ""}${answer.message}`.slice(
      0,
      300,
    );
  if ("unknown" in answer) return { ok: false, retryable: true, error };
  if (answer.status === 429 || answer.status === 401 || answer.status >= 500)
    return { ok: false, retryable: true, retryAfterMs: retryAfterMs(answer.headers), error };
  return { ok: false, retryable: false, error };
}

function retryAfterMs(headers: Headers): number | undefined {
  const seconds = Number(headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * The client-assigned id of one message (`client-` + 56 hex digits: Google allows 63 characters of
 * lowercase letters, digits and hyphens), derived from what it stands for so every retry names the
 * same message.
 */
export async function clientMessageId(accountId: string, purpose: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(`edgeclaw:googlechat:${accountId}:${purpose}`),
    ),
  );
  return `client-${[...digest]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 56)}`;
}
