import type { SendContext, SendResult } from "../adapter.ts";
import type { ReplyRoute } from "../envelope.ts";
import { msTeamsAccountFor, msTeamsCredentials, serviceUrlAllowed, type MsTeamsAccount, type MsTeamsCredentials } from "./config.ts";
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

export function connectorTarget(route: ReplyRoute, ctx: SendContext): ConnectorTarget | { error: string } {
  const account = msTeamsAccountFor(ctx.config, route.accountId);
  if (!account) return { error: "channels.msteams is not configured" };
  const credentials = msTeamsCredentials(account, ctx.env);
  if ("error" in credentials) return { error: credentials.error };
  const serviceUrl = route.extra?.serviceUrl;
  if (!serviceUrl) return { error: "the reply route has no serviceUrl" };
  if (!serviceUrlAllowed(serviceUrl, account.serviceUrlAllowlist)) return { error: `serviceUrl ${serviceUrl.slice(0, 100)} is not on channels.msteams.serviceUrlAllowlist` };
  return { account, credentials, serviceUrl };
}

/** `/v3/conversations/{id}/activities`, the id naming the thread root for channel thread replies. */
export function activitiesPath(route: ReplyRoute): string {
  const conversation = route.threadId ? `${route.to};messageid=${route.threadId}` : route.to;
  return `v3/conversations/${encodeURIComponent(conversation)}/activities`;
}

export async function callConnector(target: ConnectorTarget, method: string, path: string, body: unknown, what: string, signal?: AbortSignal): Promise<SendResult> {
  const token = await botAccessToken(target.credentials, target.account.loginBaseUrl, signal);
  if (!token.ok) return { ok: false, retryable: token.retryable, error: `msteams ${what}: ${token.error}` };
  const base = target.serviceUrl.endsWith("/") ? target.serviceUrl : `${target.serviceUrl}/`;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify(body),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    // No answer: the activity may or may not have been posted (the connector takes no idempotency key).
    return { ok: false, outcomeUnknown: true, error: `msteams ${what}: ${error instanceof Error ? error.message : String(error)}` };
  }
  const text = await response.text().catch(() => "");
  if (response.ok) {
    let id: string | undefined;
    try {
      const parsed = JSON.parse(text) as { id?: unknown };
      id = typeof parsed.id === "string" ? parsed.id : undefined;
    } catch {
      id = undefined;
    }
    return { ok: true, platformMessageId: id };
  }
  if (response.status === 401) forgetBotAccessToken(target.credentials, target.account.loginBaseUrl);
  const error = `msteams ${what}: HTTP ${response.status} ${text.slice(0, 200)}`;
  if (response.status === 429 || response.status === 401 || response.status >= 500) return { ok: false, retryable: true, retryAfterMs: retryAfterMs(response.headers), error };
  return { ok: false, retryable: false, error };
}

function retryAfterMs(headers: Headers): number | undefined {
  const seconds = Number(headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}
