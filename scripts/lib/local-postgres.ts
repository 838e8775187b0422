import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { WebSocketServer, createWebSocketStream } from "ws";

export const migrationsFolder = fileURLToPath(new URL("../../migrations", import.meta.url));

export interface LocalPostgres {
  /** Connection string the Neon driver uses (through the WebSocket bridge). */
  databaseUrl: string;
  /** host:port of the WebSocket-to-TCP bridge, for `neonConfig.wsProxy`. */
  wsProxy: string;
  pgPort: number;
  db: PGlite;
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

  const wss = new WebSocketServer({ host, port: 0 });
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  wss.on("connection", (socket) => {
    const tcp = connect(pgPort, host);
    const stream = createWebSocketStream(socket);
    stream.pipe(tcp).pipe(stream);
    // Either side going away ends both: a client that closes its WebSocket must not leave a
    // PGlite connection behind (PGlite takes a bounded number of them).
    const close = () => {
      tcp.destroy();
      socket.terminate();
    };
    tcp.on("error", close);
    tcp.on("close", close);
    stream.on("error", close);
    socket.on("close", close);
  });
  const address = wss.address();
  const wsPort = typeof address === "object" && address ? address.port : 0;

  return {
    databaseUrl: `postgres://postgres:postgres@${host}:${pgPort}/postgres`,
    wsProxy: `${host}:${wsPort}`,
    pgPort,
    db,
    async stop() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await pgServer.stop();
      await db.close();
    },
  };
}

