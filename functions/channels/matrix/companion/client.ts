import type { Agent } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * The client-server API calls the connector makes (whoami, /sync, join, account data, one event),
 * with the bot's access token. Requests go through node:http(s) rather than fetch so they can take
 * the private-network guard's agent (companion/src/private-network.ts), whose lookup judges the
 * address actually connected to. Errors name the path and the homeserver's errcode, never the
 * query (it carries the sync token) or the token.
 */

/** The token was refused (401 M_UNKNOWN_TOKEN, or 403 on whoami): nothing will work until it is fixed. */
export class MatrixAuthError extends Error {}

export class MatrixHttpError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string | undefined,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface MatrixClient {
  call<T>(
    method: "GET" | "POST" | "PUT",
    path: string,
    options: { signal: AbortSignal; body?: unknown; timeoutMs?: number },
  ): Promise<T>;
}

/** Bounds one answer (a sync after a long outage is the largest). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export function matrixClient(homeserver: string, token: string, agent?: Agent): MatrixClient {
  return {
    async call<T>(
      method: "GET" | "POST" | "PUT",
      path: string,
      {
        signal,
        body,
        timeoutMs = 15_000,
      }: { signal: AbortSignal; body?: unknown; timeoutMs?: number },
    ): Promise<T> {
      const label = `${method} ${path.split("?")[0]}`;
      const { status, text } = await send(
        new URL(`${homeserver}/_matrix/client/v3${path}`),
        method,
        { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body === undefined ? undefined : JSON.stringify(body),
        agent,
        AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      );
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : {};
      } catch {
        throw new MatrixHttpError(status, undefined, `${label} answered ${status}, not JSON`);
      }
      if (status >= 200 && status < 300) return parsed as T;
      const answer = parsed as { errcode?: unknown; retry_after_ms?: unknown };
      const errcode = typeof answer.errcode === "string" ? answer.errcode : undefined;
      const message = `${label} answered ${status}${errcode ? ` ${errcode}` : ""}`;
      if (status === 401 || errcode === "M_UNKNOWN_TOKEN")
        throw new MatrixAuthError(`${message}: check the access token`);
      throw new MatrixHttpError(
        status,
        errcode,
        message,
        typeof answer.retry_after_ms === "number" ? answer.retry_after_ms : undefined,
      );
    },
  };
}

function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  agent: Agent | undefined,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES)
          return void req.destroy(
            new Error(`${method} ${url.pathname} answered more than ${MAX_ANSWER_BYTES} bytes`),
          );
        chunks.push(chunk);
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
