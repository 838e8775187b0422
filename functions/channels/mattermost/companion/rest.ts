import type { Agent } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * The few Mattermost REST v4 calls the connector makes (identity, channel types, missed posts), with
 * the bot token. Requests go through node:http(s) rather than fetch so they can take the
 * private-network guard's agent (companion/src/private-network.ts), whose lookup judges the address
 * actually connected to.
 */

export class MattermostAuthError extends Error {}

export interface MattermostRest {
  get<T>(path: string, signal: AbortSignal): Promise<T>;
}

const REQUEST_TIMEOUT_MS = 15_000;
/** Bounds one answer (a page of missed posts is the largest; Mattermost pages at 60–200 posts). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export function mattermostRest(baseUrl: string, token: string, agent?: Agent): MattermostRest {
  return {
    async get<T>(path: string, signal: AbortSignal): Promise<T> {
      const { status, body } = await getRaw(
        new URL(`${baseUrl}/api/v4${path}`),
        { authorization: `Bearer ${token}`, "x-requested-with": "XMLHttpRequest" },
        agent,
        signal,
      );
      // Never the URL's query or the token in an error: only the path and the status.
      if (status === 401 || status === 403)
        throw new MattermostAuthError(
          `GET ${path.split("?")[0]} answered ${status}: check the bot token`,
        );
      if (status < 200 || status > 299)
        throw new Error(`GET ${path.split("?")[0]} answered ${status}`);
      return JSON.parse(body) as T;
    },
  };
}

function getRaw(
  url: URL,
  headers: Record<string, string>,
  agent: Agent | undefined,
  signal: AbortSignal,
): Promise<{ status: number; body: string }> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "GET",
        headers,
        agent,
        signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES)
            return void req.destroy(
              new Error(`GET ${url.pathname} answered more than ${MAX_ANSWER_BYTES} bytes`),
            );
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The server root as given (https://chat.example.com[/api/v4]) → its WebSocket endpoint. */
export function websocketUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, "ws")}/api/v4/websocket`;
}

export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/api\/v4$/, "");
}
