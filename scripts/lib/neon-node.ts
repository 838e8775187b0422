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
  neonConfig.wsProxy = wsProxy ? () => `${wsProxy}/` : (host) => `${host}/v2`;
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    return await work(pool);
  } finally {
    await pool.end().catch(() => undefined);
    for (const socket of sockets) socket.terminate();
  }
}
