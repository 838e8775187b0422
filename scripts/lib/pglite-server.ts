import { createServer, type Server, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";

/**
 * A Postgres wire-protocol TCP server in front of one PGlite instance, which has a single session:
 * every connection's messages take turns on it. A turn lasts from a connection's first message
 * until PGlite answers ReadyForQuery outside a transaction, so an extended-protocol batch (Parse,
 * Bind, Execute, Sync) or a transaction is never cut by another connection's messages. The
 * socket server of @electric-sql/pglite-socket takes turns per message (and keeps a connection
 * only inside a transaction), so two connections' batches interleave and one binds the other's
 * unnamed statement — "bind message supplies 2 parameters, but prepared statement requires 10",
 * or silently the wrong rows (electric-sql/pglite#1046). Every workerd Durable Object opens its
 * own connection, so local dev and the tests meet that all the time.
 */

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4);

interface Connection {
  socket: Socket;
  /** Bytes received and not yet framed into whole messages. */
  buffer: Buffer;
  started: boolean;
  /** Whole messages waiting for this connection's turn. */
  pending: Uint8Array[];
  closed: boolean;
}

export interface PgliteServer {
  port: number;
  stop(): Promise<void>;
}

export async function startPgliteServer(options: {
  db: PGlite;
  host: string;
  port?: number;
  maxConnections?: number;
}): Promise<PgliteServer> {
  const { db } = options;
  const connections = new Set<Connection>();
  /** The connection whose turn it is: mid-batch or inside a transaction. */
  let owner: Connection | null = null;
  let pumping = false;

  function nextMessage(): [Connection, Uint8Array] | undefined {
    if (owner) {
      const message = owner.pending.shift();
      return message ? [owner, message] : undefined;
    }
    for (const connection of connections) {
      const message = connection.pending.shift();
      if (message) return [connection, message];
    }
    return undefined;
  }

  async function pump(): Promise<void> {
    if (pumping) return;
    pumping = true;
    try {
      for (;;) {
        if (owner?.closed) await endTurnOfClosed();
        const next = nextMessage();
        if (!next) return;
        const [connection, message] = next;
        let answer: Uint8Array;
        try {
          // Exclusive: in-process queries (migrations, dev's own reads) share the session too.
          answer = await db.runExclusive(() => db.execProtocolRaw(message));
        } catch (error) {
          console.error(
            `local Postgres: a message failed inside PGlite (${error instanceof Error ? error.message : String(error)}); closing that connection`,
          );
          owner = connection;
          close(connection);
          continue;
        }
        const ready = lastReadyForQuery(answer);
        owner = ready === "I" && !db.isInTransaction() ? null : connection;
        if (!connection.closed && answer.length > 0) connection.socket.write(answer);
      }
    } finally {
      pumping = false;
    }
  }

  /**
   * The owner went away mid-turn: end its batch and its transaction so the next connection starts
   * clean. Runs inside pump(), so it never overlaps another message on the session.
   */
  async function endTurnOfClosed(): Promise<void> {
    try {
      // After an error Postgres skips messages until Sync; a batch cut short must not leave that
      // state to the next connection.
      await db.runExclusive(() => db.execProtocolRaw(SYNC));
      if (db.isInTransaction()) await db.exec("ROLLBACK");
    } catch {
      // PGlite keeps running; the next connection's own messages will say if it does not.
    }
    owner = null;
  }

  function close(connection: Connection): void {
    if (connection.closed) return;
    connection.closed = true;
    connection.pending = [];
    connections.delete(connection);
    connection.socket.destroy();
  }

  function frame(connection: Connection): void {
    for (;;) {
      const { buffer } = connection;
      if (!connection.started) {
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        const code = buffer.readInt32BE(4);
        if (buffer.length < length) return;
        connection.buffer = buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) connection.socket.write("N");
        else if (code === CANCEL_REQUEST) connection.socket.end();
        else if (code === PROTOCOL_3) {
          connection.started = true;
          connection.pending.push(new Uint8Array(buffer.subarray(0, length)));
        } else {
          connection.socket.destroy();
          return;
        }
        continue;
      }
      if (buffer.length < 5) return;
      const length = 1 + buffer.readInt32BE(1);
      if (buffer.length < length) return;
      connection.buffer = buffer.subarray(length);
      // Terminate: the session is PGlite's only one, so it is not ended; the socket is.
      if (buffer[0] === 0x58) {
        connection.socket.end();
        return;
      }
      connection.pending.push(new Uint8Array(buffer.subarray(0, length)));
    }
  }

  const server: Server = createServer((socket) => {
    socket.setNoDelay(true);
    const connection: Connection = {
      socket,
      buffer: Buffer.alloc(0),
      started: false,
      pending: [],
      closed: false,
    };
    connections.add(connection);
    socket.on("data", (chunk: Buffer) => {
      connection.buffer = Buffer.concat([connection.buffer, chunk]);
      frame(connection);
      void pump();
    });
    const gone = () => {
      close(connection);
      void pump();
    };
    socket.on("close", gone);
    socket.on("error", gone);
  });
  server.maxConnections = options.maxConnections ?? 64;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    port,
    async stop() {
      for (const connection of connections) connection.socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The transaction status of the last ReadyForQuery in a backend answer ("I", "T", "E"), if any. */
export function lastReadyForQuery(answer: Uint8Array): string | undefined {
  const view = new DataView(answer.buffer, answer.byteOffset, answer.byteLength);
  let status: string | undefined;
  for (let offset = 0; offset + 5 <= answer.length; ) {
    const length = view.getInt32(offset + 1);
    if (answer[offset] === 0x5a && length === 5 && offset + 6 <= answer.length)
      status = String.fromCharCode(answer[offset + 5]!);
    offset += 1 + length;
  }
  return status;
}
