import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { startPgBridge, type PgBridge } from "./pg-bridge.ts";

export const migrationsFolder = fileURLToPath(new URL("../../migrations", import.meta.url));

export interface LocalPostgres {
  /** Connection string the Neon driver uses (through the WebSocket bridge). */
  databaseUrl: string;
  /** host:port of the WebSocket-to-TCP bridge, for `neonConfig.wsProxy`. */
  wsProxy: string;
  pgPort: number;
  db: PGlite;
  /** Another bridge to the same database (tests: one they may freeze or kill without disturbing others). */
  addBridge(options?: { control?: boolean }): Promise<PgBridge>;
  stop(): Promise<void>;
}

/**
 * Postgres with nothing to install: PGlite (WASM Postgres) behind a TCP socket server, plus a small
 * WebSocket bridge so the Neon serverless driver — the one production uses — reaches it from workerd.
 * `dataDir` undefined keeps everything in memory (tests); a folder keeps it across restarts (dev).
 */
export async function startLocalPostgres(
  options: { dataDir?: string; host?: string; /** false: leave the database empty (tests of other migrators). */ migrate?: boolean } = {},
): Promise<LocalPostgres> {
  const host = options.host ?? "127.0.0.1";
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const db = await PGlite.create(options.dataDir);
  if (options.migrate !== false) await migrate(drizzle(db), { migrationsFolder });

  const pgServer = new PGLiteSocketServer({ db, host, port: 0, maxConnections: 64 });
  await pgServer.start();
  const pgPort = Number(pgServer.getServerConn().split(":").pop());

  const bridge = await startPgBridge({ host, pgPort });
  const extras: PgBridge[] = [];

  return {
    databaseUrl: `postgres://postgres:postgres@${host}:${pgPort}/postgres`,
    wsProxy: bridge.wsProxy,
    pgPort,
    db,
    async addBridge(bridgeOptions) {
      const extra = await startPgBridge({ host, pgPort, ...bridgeOptions });
      extras.push(extra);
      return extra;
    },
    async stop() {
      for (const extra of extras) await extra.stop();
      await bridge.stop();
      await pgServer.stop();
      await db.close();
    },
  };
}

