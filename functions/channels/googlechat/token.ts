import { importPKCS8, SignJWT } from "jose";
import * as z from "zod";
import type { ServiceAccountKey } from "./config.ts";

/**
 * An access token for the Chat API from a service account key: a JWT signed with the key
 * (RS256, scope chat.bot, audience the token URL) exchanged at the token URL (OAuth 2.0 JWT bearer
 * grant). Kept per isolate until five minutes before it expires; only resolved tokens are shared
 * between requests. `forget` drops one Google refused, so the next attempt fetches a fresh one.
 */

const CHAT_SCOPE = "https://www.googleapis.com/auth/chat.bot";
const REFRESH_BEFORE_MS = 5 * 60_000;

const tokenAnswerSchema = z
  .object({ access_token: z.string().min(1), expires_in: z.number().positive().optional() })
  .loose();

const cache = new Map<string, { token: string; expiresAt: number }>();

const cacheKey = (key: ServiceAccountKey, tokenUrl: string) => `${key.client_email}|${tokenUrl}`;

export type ChatTokenResult =
  | { ok: true; token: string }
  | { ok: false; retryable: boolean; error: string };

export async function chatAccessToken(
  key: ServiceAccountKey,
  tokenUrl: string,
  signal?: AbortSignal,
): Promise<ChatTokenResult> {
  const hit = cache.get(cacheKey(key, tokenUrl));
  if (hit && hit.expiresAt - REFRESH_BEFORE_MS > Date.now()) return { ok: true, token: hit.token };
  let assertion: string;
  try {
    const privateKey = await importPKCS8(key.private_key, "RS256");
    const now = Math.floor(Date.now() / 1000);
    assertion = await new SignJWT({ scope: CHAT_SCOPE })
      .setProtectedHeader({ alg: "RS256", typ: "JWT" })
      .setIssuer(key.client_email)
      .setAudience(tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(privateKey);
  } catch (error) {
    return {
      ok: false,
      retryable: false,
      error: `the service account's private key cannot sign (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  let response: Response;
  try {
    response = await fetch(tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        assertion,
      }),
      redirect: "manual",
      signal,
    });
  } catch (error) {
    return {
      ok: false,
      retryable: true,
      error: `token exchange: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const body = await response.json().catch(() => undefined);
  const parsed = tokenAnswerSchema.safeParse(body);
  if (!response.ok || !parsed.success) {
    // 400/401 (invalid_grant: a revoked key, a wrong clock) will not fix itself; 429/5xx may.
    return {
      ok: false,
      retryable: response.status === 429 || response.status >= 500,
      error: `token exchange: HTTP ${response.status}`,
    };
  }
  const expiresAt = Date.now() + (parsed.data.expires_in ?? 3600) * 1000;
  cache.set(cacheKey(key, tokenUrl), { token: parsed.data.access_token, expiresAt });
  return { ok: true, token: parsed.data.access_token };
}

export function forgetChatAccessToken(key: ServiceAccountKey, tokenUrl: string): void {
  cache.delete(cacheKey(key, tokenUrl));
}
