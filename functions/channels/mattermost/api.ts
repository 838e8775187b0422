import type { SendContext } from "../adapter.ts";
import { checkFetchUrl, STRICT_SSRF_POLICY } from "../../http/ssrf.ts";
import {
  mattermostAllowsPrivateNetwork,
  mattermostBaseUrl,
  mattermostBotToken,
  type MattermostAccount,
} from "./config.ts";

/**
 * Mattermost REST v4 with the bot's token (`Authorization: Bearer`). Calls never retry: the outbox
 * owns retries. A call answers with its value, Mattermost's refusal (HTTP status and its error id),
 * or "lost" when the request may or may not have reached the server (network error, timeout).
 */

export type MattermostCall<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      kind: "refused";
      status: number;
      errorId?: string;
      message: string;
      retryAfterMs?: number;
    }
  | { ok: false; kind: "lost"; error: string };

export interface MattermostBot {
  account: MattermostAccount;
  baseUrl: string;
  token: string;
  signal?: AbortSignal;
}

export interface MattermostPostRecord {
  id: string;
  user_id: string;
  channel_id: string;
  root_id?: string;
  message: string;
  create_at: number;
  props?: Record<string, unknown> | null;
}

/**
 * The account, server and token a reply route belongs to; a reason when one is missing or the
 * server may not be reached. This is the only way to a MattermostBot, so no call leaves for a
 * server the private-network guard refused.
 */
export function mattermostBot(
  ctx: SendContext<MattermostAccount>,
): MattermostBot | { missing: string } {
  const account = ctx.account;
  if (!account) return { missing: "channels.mattermost is not configured" };
  const { accountId } = account;
  const baseUrl = mattermostBaseUrl(account, ctx.env);
  if (!baseUrl) return { missing: `no Mattermost baseUrl for account ${accountId}` };
  const refused = mattermostServerRefusal(account, baseUrl);
  if (refused) return { missing: refused };
  const token = mattermostBotToken(account, ctx.env);
  if (!token) return { missing: `no Mattermost bot token for account ${accountId}` };
  return { account, baseUrl, token, signal: ctx.signal };
}

/**
 * Why the account's server may not be reached, or undefined. A Worker cannot resolve a name before
 * `fetch`, so the server is judged as written: IP literals in every spelling (loopback, RFC 1918,
 * CGNAT, link-local, unique-local, IPv4-mapped IPv6, …) and names that are internal by definition
 * (`localhost`, `*.local`, `*.internal`, single-label names). The companion, which can resolve,
 * also checks every address the name resolves to.
 */
export function mattermostServerRefusal(
  account: MattermostAccount,
  baseUrl: string,
): string | undefined {
  if (mattermostAllowsPrivateNetwork(account)) return undefined;
  const checked = checkFetchUrl(baseUrl, STRICT_SSRF_POLICY);
  if (checked.ok) return undefined;
  return `Mattermost server refused for account ${account.accountId}: ${checked.reason} (set channels.mattermost.network.dangerouslyAllowPrivateNetwork for a LAN/tailnet server)`;
}

export async function mattermostApi<T>(
  bot: MattermostBot,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
): Promise<MattermostCall<T>> {
  let response: Response;
  // A file upload (POST /files) is multipart; the form sets its own content type.
  const form = body instanceof FormData;
  try {
    response = await fetch(`${bot.baseUrl}/api/v4${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bot.token}`,
        ...(body === undefined || form ? {} : { "content-type": "application/json" }),
        "x-requested-with": "XMLHttpRequest",
      },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
      signal: bot.signal ?? AbortSignal.timeout(15_000),
    });
  } catch (error) {
    return {
      ok: false,
      kind: "lost",
      error: `mattermost ${method} ${path.split("?")[0]}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    if (response.ok)
      return {
        ok: false,
        kind: "lost",
        error: `mattermost ${method} ${path.split("?")[0]}: answer was not JSON`,
      };
    parsed = {};
  }
  if (response.ok) return { ok: true, value: parsed as T };
  const error = (parsed ?? {}) as { id?: unknown; message?: unknown };
  return {
    ok: false,
    kind: "refused",
    status: response.status,
    errorId: typeof error.id === "string" ? error.id : undefined,
    message:
      `mattermost ${response.status}${typeof error.id === "string" ? ` ${error.id}` : ""}: ${typeof error.message === "string" ? error.message : response.statusText}`.slice(
        0,
        300,
      ),
    retryAfterMs: retryAfterMs(response.headers),
  };
}

/** Retry-After, else X-Ratelimit-Reset (seconds until the window resets), as milliseconds. */
function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get("retry-after") ?? headers.get("x-ratelimit-reset");
  const seconds = value === null ? NaN : Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.max(1, seconds) * 1000 : undefined;
}
