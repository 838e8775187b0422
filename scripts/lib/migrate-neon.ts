import { Pool, neonConfig } from "@neondatabase/serverless";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/neon-serverless";
import { migrate } from "drizzle-orm/neon-serverless/migrator";
import { WebSocket } from "ws";
import { migrationsFolder } from "./local-postgres.ts";

export interface MigrationOutcome {
  /** Migrations recorded in drizzle's journal table before and after this run. */
  before: number;
  after: number;
}

/**
 * Applies the drizzle migrations in migrations/ over the same driver the Worker uses (the Neon
 * serverless driver, WebSockets). From Node it needs `ws`; `wsProxy` (host:port) points it at the
 * local PGlite bridge instead of Neon, which is how this path is exercised offline.
 */
export async function migrateDatabase(databaseUrl: string, options: { wsProxy?: string } = {}): Promise<MigrationOutcome> {
  const sockets = new Set<WebSocket>();
  // Tracked so they can be closed at the end: with @neondatabase/serverless 1.2.0 in Node,
  // Pool.end() resolves but leaves the client's WebSocket open, and the process never exits.
  neonConfig.webSocketConstructor = class TrackedWebSocket extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      sockets.add(this);
    }
  };
  if (options.wsProxy) {
    const proxy = options.wsProxy;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineConnect = false;
    neonConfig.wsProxy = () => `${proxy}/`;
  }
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    const before = await appliedCount(db);
    await migrate(db, { migrationsFolder });
    return { before, after: await appliedCount(db) };
  } finally {
    await pool.end().catch(() => undefined);
    for (const socket of sockets) socket.terminate();
  }
}

async function appliedCount(db: ReturnType<typeof drizzle>): Promise<number> {
  const table = await db.execute<{ present: boolean }>(
    sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  );
  if (!table.rows[0]?.present) return 0;
  const rows = await db.execute<{ n: number }>(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
  return rows.rows[0]?.n ?? 0;
}

/** `user:password@host/db` with the password blanked, for messages. */
export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = "***";
    return `${url.protocol}//${url.username ? `${url.username}${url.password ? ":***" : ""}@` : ""}${url.host}${url.pathname}`;
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}
