/** The few Mattermost REST v4 calls the connector makes (identity, channel types, missed posts), with the bot token. */

export class MattermostAuthError extends Error {}

export interface MattermostRest {
  get<T>(path: string, signal: AbortSignal): Promise<T>;
}

export function mattermostRest(baseUrl: string, token: string): MattermostRest {
  return {
    async get<T>(path: string, signal: AbortSignal): Promise<T> {
      const response = await fetch(`${baseUrl}/api/v4${path}`, {
        headers: { authorization: `Bearer ${token}`, "x-requested-with": "XMLHttpRequest" },
        signal: AbortSignal.any([signal, AbortSignal.timeout(15_000)]),
      });
      // Never the URL's query or the token in an error: only the path's first segment and the status.
      if (response.status === 401 || response.status === 403) throw new MattermostAuthError(`GET ${path.split("?")[0]} answered ${response.status}: check the bot token`);
      if (!response.ok) throw new Error(`GET ${path.split("?")[0]} answered ${response.status}`);
      return (await response.json()) as T;
    },
  };
}

/** The server root as given (https://chat.example.com[/api/v4]) → its WebSocket endpoint. */
export function websocketUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, "ws")}/api/v4/websocket`;
}

export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/api\/v4$/, "");
}
