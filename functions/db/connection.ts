import { Client } from "@neondatabase/serverless";
import { drizzle, type NeonDatabase } from "drizzle-orm/neon-serverless";
import * as schema from "./schema.ts";
import { GuardedSocket } from "./socket.ts";
import { TransientError } from "../core/errors.ts";

export type Db = NeonDatabase<typeof schema>;

export interface ConnectionTarget {
  databaseUrl: string;
  /** host:port of the local WebSocket bridge in front of PGlite (dev and tests only). */
  wsProxy?: string;
}

export interface ConnectionTimeouts {
  connectTimeoutMs: number;
  queryTimeoutMs: number;
}

/** One open Postgres connection over the Neon driver's WebSocket. */
export interface PgConnection {
  db: Db;
  /** Set once the socket failed, closed or a query timed out: the connection must not be reused. */
  readonly broken: boolean;
  /** The transport failure that broke it, for the caller's error. */
  readonly failure: unknown;
  /** Closes the socket; settles when the server has seen it go (bounded). Never rejects. */
  close(): Promise<void>;
}

/** The connection could not be opened or broke mid-use (network, timeout, server gone). */
export class ConnectionFailedError extends TransientError {}

/**
 * Opens one connection with every failure path handled. The driver reports a dead socket by
 * emitting "error" on the Client — with no listener, an uncaught exception thrown from a socket
 * event — so the client gets a listener; the socket itself is a GuardedSocket (see there). The
 * driver's own connect timeout never settles connect() over WebSockets, so the timeout is ours.
 *
 * The socket is closed by hand: the driver's end() waits for a close that never comes and leaves
 * the socket open, so a Durable Object — which outlives its requests — would leak one database
 * connection per call until the server refuses new ones.
 */
export async function openConnection(
  target: ConnectionTarget,
  timeouts: ConnectionTimeouts,
): Promise<PgConnection> {
  const sockets: GuardedSocket[] = [];
  let broken = false;
  let failure: unknown;
  const breaks = (cause: unknown) => {
    if (broken) return;
    broken = true;
    failure = cause;
  };
  const client = new Client({
    connectionString: target.databaseUrl,
    query_timeout: timeouts.queryTimeoutMs,
  });
  client.on("error", (error) => breaks(error));
  client.neonConfig.webSocketConstructor = class extends GuardedSocket {
    constructor(url: string) {
      super(url, breaks);
      sockets.push(this);
    }
  } as unknown as typeof WebSocket;
  if (target.wsProxy) {
    // Local bridge in front of PGlite: plain ws, no pipelining (PGlite has no auth handshake to skip).
    client.neonConfig.useSecureWebSocket = false;
    client.neonConfig.pipelineConnect = false;
    const proxy = target.wsProxy;
    client.neonConfig.wsProxy = () => `${proxy}/`;
  }

  const close = async () => {
    broken = true;
    // end() queues the Terminate message on a timer; let it go out, then close the socket ourselves
    // (a socket that is already gone drops it).
    client.end().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await Promise.all(sockets.map((socket) => socket.close()));
  };

  let timer: ReturnType<typeof setTimeout> | null = null;
  try {
    await Promise.race([
      client.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new ConnectionFailedError(`connect timed out after ${timeouts.connectTimeoutMs} ms`),
            ),
          timeouts.connectTimeoutMs,
        );
      }),
    ]);
  } catch (error) {
    void close();
    throw error instanceof ConnectionFailedError
      ? error
      : new ConnectionFailedError("could not connect to Postgres", { cause: error });
  } finally {
    clearTimeout(timer);
  }

  return {
    db: drizzle({ client, schema }),
    get broken() {
      return broken;
    },
    get failure() {
      return failure;
    },
    close,
  };
}

/**
 * True when `error` came from the transport rather than from Postgres answering: a Postgres error
 * carries a five-character SQLSTATE `code` and leaves the connection usable. The driver's own
 * transport errors carry nothing but their words, so this is the one place they are read: here they
 * become a typed, classed error (the gate's PostgresUnavailableError) and nothing above reads text.
 */
export function isTransportFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof ConnectionFailedError) return true;
    if (/Query read timeout|Connection terminated|not queryable/.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}
