import type { SendContext, SendResult } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  msTeamsCredentials,
  serviceUrlAllowed,
  type MsTeamsAccount,
  type MsTeamsCredentials,
} from "./config.ts";
import { botAccessToken, forgetBotAccessToken } from "./token.ts";

/**
 * Calls to the Bot Connector REST API at the activity's serviceUrl. The serviceUrl came with a
 * verified activity, but the bot's token is only ever sent to hosts on `serviceUrlAllowlist`:
 * a forged or odd serviceUrl cannot exfiltrate it.
 */

export interface ConnectorTarget {
  account: MsTeamsAccount;
  credentials: MsTeamsCredentials;
  serviceUrl: string;
}

export function connectorTarget(
  route: ReplyRoute,
  ctx: SendContext<MsTeamsAccount>,
): ConnectorTarget | { error: string } {
  const account = ctx.account;
  if (!account) return { error: "channels.msteams is not configured" };
  const credentials = msTeamsCredentials(account, ctx.env);
  if ("error" in credentials) return { error: credentials.error };
  const serviceUrl = route.extra?.serviceUrl;
  if (!serviceUrl) return { error: "the reply route has no serviceUrl" };
  if (!serviceUrlAllowed(serviceUrl, account.serviceUrlAllowlist))
    return {
      error: `serviceUrl ${serviceUrl.slice(0, 100)} is not on channels.msteams.serviceUrlAllowlist`,
    };
  return { account, credentials, serviceUrl };
}

/** `/v3/conversations/{id}/activities`, the id naming the thread root for channel thread replies. */
export function activitiesPath(route: ReplyRoute): string {
  const conversation = route.threadId ? `${route.to};messageid=${route.threadId}` : route.to;
  return `v3/conversations/${encodeURIComponent(conversation)}/activities`;
}

/** `/v3/conversations/{id}/activities/{activityId}`: one posted activity (edit with PUT, remove with DELETE). */
export function activityPath(route: ReplyRoute, activityId: string): string {
  return `${activitiesPath(route)}/${encodeURIComponent(activityId)}`;
}

/** Whether the route is a personal (1:1) chat: the only place Teams streams natively. */
export function isPersonalChat(route: ReplyRoute): boolean {
  return route.extra?.conversationType === "personal";
}

/** What the connector said: an HTTP answer, no answer at all (outcome unknown), or no token to ask with. */
export type ConnectorAnswer =
  | { kind: "answered"; status: number; id?: string; body: string; retryAfterMs?: number }
  | { kind: "no-answer"; error: string }
  | { kind: "no-token"; retryable: boolean; error: string };

export async function requestConnector(
  target: ConnectorTarget,
  method: string,
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<ConnectorAnswer> {
  const token = await botAccessToken(target.credentials, target.account.loginBaseUrl, signal);
  if (!token.ok) return { kind: "no-token", retryable: token.retryable, error: token.error };
  const base = target.serviceUrl.endsWith("/") ? target.serviceUrl : `${target.serviceUrl}/`;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    // No answer: the activity may or may not have been posted (the connector takes no idempotency key).
    return { kind: "no-answer", error: error instanceof Error ? error.message : String(error) };
  }
  const text = await response.text().catch(() => "");
  if (response.status === 401)
    forgetBotAccessToken(target.credentials, target.account.loginBaseUrl);
  let id: string | undefined;
  if (response.ok) {
    try {
      const parsed = JSON.parse(text) as { id?: unknown };
      id = typeof parsed.id === "string" && parsed.id ? parsed.id : undefined;
    } catch {
      id = undefined;
    }
  }
  return {
    kind: "answered",
    status: response.status,
    id,
    body: text.slice(0, 300),
    retryAfterMs: retryAfterMs(response.headers),
  };
}

/** The outbox's view of a connector answer: 429 (Retry-After), 5xx and 401 (token refreshed) are retried. */
export function sendResultOf(answer: ConnectorAnswer, what: string): SendResult {
  if (answer.kind === "no-answer")
    return { ok: false, outcomeUnknown: true, error: `msteams ${what}: ${answer.error}` };
  if (answer.kind === "no-token")
    return { ok: false, retryable: answer.retryable, error: `msteams ${what}: ${answer.error}` };
  if (answer.status >= 200 && answer.status < 300)
    return { ok: true, platformMessageId: answer.id };
  const error = `msteams ${what}: HTTP ${answer.status} ${answer.body.slice(0, 200)}`;
  if (answer.status === 429 || answer.status === 401 || answer.status >= 500)
    return { ok: false, retryable: true, retryAfterMs: answer.retryAfterMs, error };
  return { ok: false, retryable: false, error };
}

export async function callConnector(
  target: ConnectorTarget,
  method: string,
  path: string,
  body: unknown,
  what: string,
  signal?: AbortSignal,
): Promise<SendResult> {
  return sendResultOf(await requestConnector(target, method, path, body, signal), what);
}

function retryAfterMs(headers: Headers): number | undefined {
  const seconds = Number(headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
