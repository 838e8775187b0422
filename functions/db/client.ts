import { Pool, neonConfig } from "@neondatabase/serverless";
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

/**
 * Runs `work` with a drizzle client on a fresh pool. Workers may not share sockets between
 * requests, so the pool lives exactly as long as the work and is closed after it.
 */
export async function withDb<T>(env: DbEnv, work: (db: Db) => Promise<T>): Promise<T> {
  if (!env.DATABASE_URL) throw new DatabaseNotConfiguredError();
  const proxy = env.EDGECLAW_PG_WS_PROXY;
  if (proxy) {
    // Local bridge in front of PGlite: plain ws, no pipelining (PGlite has no auth handshake to skip).
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineConnect = false;
    neonConfig.wsProxy = () => `${proxy}/`;
  }
  const pool = new Pool({ connectionString: env.DATABASE_URL, max: 1 });
  try {
    return await work(drizzle({ client: pool, schema }));
  } finally {
    await pool.end().catch(() => undefined);
  }
}
