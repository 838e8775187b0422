import { Client } from "@neondatabase/serverless";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import * as schema from "./schema.ts";

export type Db = NeonDatabase<typeof schema>;

export interface DbEnv {
  DATABASE_URL?: string;
  EDGECLAW_PG_WS_PROXY?: string;
}

export class DatabaseNotConfiguredError extends Error {
  constructor() {
    super("DATABASE_URL is not set: run `npm run dev`, or set the Worker secret DATABASE_URL to your Neon connection string");
    this.name = "DatabaseNotConfiguredError";
  }
}

/** Longest wait for the driver's own goodbye after the socket is closed. */
const END_TIMEOUT_MS = 1_000;

/**
 * Runs `work` with a drizzle client on its own connection, closed afterwards. Workers may not share
 * sockets between requests, so a connection lives exactly as long as the work.
 *
 * The WebSocket is closed by hand: the driver's end() (Client and Pool alike) waits for a close that
 * never comes and leaves the socket open, so a Durable Object — which outlives its requests — would
 * leak one database connection per call until the server refuses new ones.
 */
export async function withDb<T>(env: DbEnv, work: (db: Db) => Promise<T>): Promise<T> {
  if (!env.DATABASE_URL) throw new DatabaseNotConfiguredError();
  const sockets: WebSocket[] = [];
  const client = new Client(env.DATABASE_URL);
  client.neonConfig.webSocketConstructor = class TrackedWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
    }
  };
  const proxy = env.EDGECLAW_PG_WS_PROXY;
  if (proxy) {
    // Local bridge in front of PGlite: plain ws, no pipelining (PGlite has no auth handshake to skip).
    client.neonConfig.useSecureWebSocket = false;
    client.neonConfig.pipelineConnect = false;
    client.neonConfig.wsProxy = () => `${proxy}/`;
  }
  try {
    await client.connect();
    return await work(drizzle({ client, schema }));
  } finally {
    const ended = client.end().catch(() => undefined);
    // Let the driver flush its Terminate message first; then close the socket ourselves.
    await new Promise((resolve) => setTimeout(resolve, 0));
    for (const socket of sockets) {
      try {
        socket.close();
      } catch {
        // already closed
      }
    }
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, END_TIMEOUT_MS))]);
  }
}
