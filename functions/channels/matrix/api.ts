import type { SendContext } from "../adapter.ts";
import { checkFetchUrl, STRICT_SSRF_POLICY } from "../../http/ssrf.ts";
import {
  matrixAccessToken,
  matrixAllowsPrivateNetwork,
  matrixHomeserver,
  type MatrixAccount,
} from "./config.ts";

/**
 * The Matrix client-server API from the Worker, with the bot's access token
 * (`Authorization: Bearer`). Calls never retry: the outbox owns retries. A call answers with its
 * value, the homeserver's refusal (HTTP status, `errcode`, `retry_after_ms`), or "lost" when the
 * request may or may not have reached the homeserver (network error, timeout).
 */

export type MatrixCall<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      kind: "refused";
      status: number;
      errcode?: string;
      message: string;
      retryAfterMs?: number;
    }
  | { ok: false; kind: "lost"; error: string };

export interface MatrixBot {
  account: MatrixAccount;
  homeserver: string;
  token: string;
  signal?: AbortSignal;
}

/**
 * The account, homeserver and token a reply route belongs to, or why there is none. The only way
 * to a MatrixBot, so no call leaves for a homeserver the private-network guard refused.
 */
export function matrixBot(ctx: SendContext<MatrixAccount>): MatrixBot | { missing: string } {
  const account = ctx.account;
  if (!account) return { missing: "channels.matrix is not configured" };
  const homeserver = matrixHomeserver(account, ctx.env);
  if (!homeserver) return { missing: `no Matrix homeserver for account ${account.accountId}` };
  if (!matrixAllowsPrivateNetwork(account)) {
    // A Worker cannot resolve a name before fetch: the host is judged as written (the companion,
    // which can resolve, also checks every address the name resolves to).
    const checked = checkFetchUrl(homeserver, STRICT_SSRF_POLICY);
    if (!checked.ok)
      return {
        missing: `Matrix homeserver refused for account ${account.accountId}: ${checked.reason} (set channels.matrix.network.dangerouslyAllowPrivateNetwork for a LAN/tailnet homeserver)`,
      };
  }
  const token = matrixAccessToken(account, ctx.env);
  if (!token) return { missing: `no Matrix access token for account ${account.accountId}` };
  return { account, homeserver, token, signal: ctx.signal };
}

export async function matrixApi<T>(
  bot: MatrixBot,
  method: "GET" | "POST" | "PUT",
  path: string,
  body?: unknown,
): Promise<MatrixCall<T>> {
  // Never the query (it may carry tokens elsewhere in the API) in an error: the path only.
  const label = `matrix ${method} ${path.split("?")[0]}`;
  let response: Response;
  try {
    response = await fetch(`${bot.homeserver}/_matrix/client/v3${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bot.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: bot.signal ?? AbortSignal.timeout(15_000),
    });
  } catch (error) {
    return {
      ok: false,
      kind: "lost",
      error: `${label}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    if (response.ok) return { ok: false, kind: "lost", error: `${label}: answer was not JSON` };
    parsed = {};
  }
  if (response.ok) return { ok: true, value: parsed as T };
  const error = (parsed ?? {}) as { errcode?: unknown; error?: unknown; retry_after_ms?: unknown };
  const errcode = typeof error.errcode === "string" ? error.errcode : undefined;
  const header = Number(response.headers.get("retry-after"));
  return {
    ok: false,
    kind: "refused",
    status: response.status,
    errcode,
    message:
      `${label}: ${response.status}${errcode ? ` ${errcode}` : ""} ${typeof error.error === "string" ? error.error : response.statusText}`.slice(
        0,
        300,
      ),
    retryAfterMs:
      typeof error.retry_after_ms === "number"
        ? error.retry_after_ms
        : Number.isFinite(header) && header > 0
          ? header * 1000
          : undefined,
  };
}
