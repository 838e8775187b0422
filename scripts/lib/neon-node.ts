import { Pool, neonConfig } from "@neondatabase/serverless";
import { WebSocket } from "ws";

/**
 * Runs `work` with a Neon serverless Pool from Node (deploy-time migrations, dev tooling). `wsProxy`
 * (host:port) points the driver at the local PGlite bridge instead of Neon.
 */
export async function withNeonPool<T>(
  databaseUrl: string,
  wsProxy: string | undefined,
  work: (pool: Pool) => Promise<T>,
): Promise<T> {
  const sockets = new Set<WebSocket>();
  // Tracked so they can be closed at the end: with @neondatabase/serverless 1.2.0 in Node,
  // Pool.end() resolves but leaves the client's WebSocket open, and the process never exits.
  neonConfig.webSocketConstructor = class TrackedWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      sockets.add(this);
    }
  };
  // neonConfig is global: each call sets every field it depends on, so a local run before does not
  // send a later Neon connection to a stale local port.
  neonConfig.useSecureWebSocket = !wsProxy;
  neonConfig.pipelineConnect = wsProxy ? false : "password";
  neonConfig.wsProxy = wsProxy ? () => `${wsProxy}/` : neonWebSocketAddress;
  const problem = databaseUrlProblem(databaseUrl);
  if (problem) throw new Error(problem);
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end().catch(() => undefined);
    for (const socket of sockets) socket.terminate();
  }
}

/**
 * Where the driver opens its WebSocket for `host:port` of the connection string: Neon serves it on
 * 443 at /v2 for its standard Postgres port 5432; any other port the URL names (a proxy of your own,
 * a pooler on another port) is honoured, not silently replaced by 443.
 */
export function neonWebSocketAddress(host: string, port: string | number | undefined): string {
  const number = Number(port);
  return number && number !== 5432 ? `${host}:${number}/v2` : `${host}/v2`;
}

/** Why a DATABASE_URL cannot be used (undefined: it can): only Postgres connection strings are. */
export function databaseUrlProblem(databaseUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return "DATABASE_URL is not a URL: give the Postgres connection string (Neon console → Connect, postgres://user:pass@ep-….neon.tech/neondb?sslmode=require)";
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:")
    return `DATABASE_URL must be a Postgres connection string (postgres:// or postgresql://), not ${url.protocol}//…: edgeclaw keeps its data in Postgres (Neon)`;
  if (!url.hostname) return "DATABASE_URL names no host";
  return undefined;
}
