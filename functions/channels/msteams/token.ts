import * as z from "zod";
import type { MsTeamsCredentials } from "./config.ts";

/**
 * The bot's access token for the Bot Connector API: OAuth 2.0 client credentials at
 * `<loginBaseUrl>/<tenant>/oauth2/v2.0/token` (SingleTenant) or `<loginBaseUrl>/botframework.com/…`
 * (MultiTenant), scope https://api.botframework.com/.default. Kept per isolate until five minutes
 * before it expires; only resolved tokens are shared between requests. `forget` drops one the
 * connector refused, so the next attempt fetches a fresh one.
 */

const BOT_SCOPE = "https://api.botframework.com/.default";
const REFRESH_BEFORE_MS = 5 * 60_000;

const tokenAnswerSchema = z
  .object({ access_token: z.string().min(1), expires_in: z.coerce.number().positive().optional() })
  .loose();

const cache = new Map<string, { token: string; expiresAt: number }>();

export function tokenUrl(loginBaseUrl: string, credentials: MsTeamsCredentials): string {
  const authority =
    credentials.appType === "SingleTenant" ? credentials.tenantId! : "botframework.com";
  return `${loginBaseUrl.replace(/\/+$/, "")}/${encodeURIComponent(authority)}/oauth2/v2.0/token`;
}

export type BotTokenResult =
  | { ok: true; token: string }
  | { ok: false; retryable: boolean; error: string };

export async function botAccessToken(
  credentials: MsTeamsCredentials,
  loginBaseUrl: string,
  signal?: AbortSignal,
): Promise<BotTokenResult> {
  if (!credentials.appPassword)
    return {
      ok: false,
      retryable: false,
      error: "no appPassword (client secret) for Microsoft Teams",
    };
  const url = tokenUrl(loginBaseUrl, credentials);
  const key = `${credentials.appId}|${url}`;
  const hit = cache.get(key);
  if (hit && hit.expiresAt - REFRESH_BEFORE_MS > Date.now()) return { ok: true, token: hit.token };
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: credentials.appId,
        client_secret: credentials.appPassword,
        scope: BOT_SCOPE,
      }),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    return {
      ok: false,
      retryable: true,
      error: `token request: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const parsed = tokenAnswerSchema.safeParse(await response.json().catch(() => undefined));
  if (!response.ok || !parsed.success) {
    // 400/401 (a wrong or expired client secret) will not fix itself; 429/5xx may.
    return {
      ok: false,
      retryable: response.status === 429 || response.status >= 500,
      error: `token request: HTTP ${response.status}`,
    };
  }
  cache.set(key, {
    token: parsed.data.access_token,
    expiresAt: Date.now() + (parsed.data.expires_in ?? 3600) * 1000,
  });
  return { ok: true, token: parsed.data.access_token };
}

export function forgetBotAccessToken(credentials: MsTeamsCredentials, loginBaseUrl: string): void {
  cache.delete(`${credentials.appId}|${tokenUrl(loginBaseUrl, credentials)}`);
}
