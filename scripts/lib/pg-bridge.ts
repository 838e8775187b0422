import { connect, type Socket } from "node:net";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { WebSocketServer, createWebSocketStream, type WebSocket } from "ws";

export interface BridgeStats {
  /** WebSocket connections open right now (each is one Postgres connection). */
  open: number;
  /** Most open at once since the last reset. */
  peak: number;
  /** Connections accepted since the last reset. */
  opened: number;
}

export interface PgBridge {
  /** host:port, for `neonConfig.wsProxy`. */
  wsProxy: string;
  stats(): BridgeStats;
  /** Stops moving bytes both ways (a frozen server): connections stay open, queries hang. */
  freeze(): void;
  /** Drops every connection and refuses new ones (a server that died). */
  kill(): void;
  /** Back to normal after freeze() or kill(); resets the counters. */
  resume(): void;
  stop(): Promise<void>;
}

interface Link {
  ws: WebSocket;
  tcp: Socket;
  resume(): void;
}

/**
 * A WebSocket-to-TCP bridge in front of a Postgres socket server, so the Neon serverless driver —
 * the one production uses — reaches local Postgres from workerd. With `control`, it also answers
 * `GET /_control/stats` and `POST /_control/{freeze,kill,resume}` on the same port, for tests that
 * count connections or simulate an outage; dev never turns that on.
 */
export async function startPgBridge(options: {
  host: string;
  pgPort: number;
  control?: boolean;
}): Promise<PgBridge> {
  const { host, pgPort } = options;
  const links = new Set<Link>();
  let mode: "normal" | "frozen" | "dead" = "normal";
  let peak = 0;
  let opened = 0;

  const http = createServer((req, res) => (options.control ? control(req, res) : notFound(res)));
  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (ws) => {
    if (mode === "dead") {
      ws.terminate();
      return;
    }
    const tcp = connect(pgPort, host);
    const stream = createWebSocketStream(ws);
    const link: Link = {
      ws,
      tcp,
      resume: () => {
        stream.resume();
        tcp.resume();
      },
    };
    links.add(link);
    opened++;
    peak = Math.max(peak, links.size);
    stream.pipe(tcp).pipe(stream);
    if (mode === "frozen") {
      stream.pause();
      tcp.pause();
    }
    // Either side going away ends both: a client that closes its WebSocket must not leave a
    // Postgres connection behind (PGlite takes a bounded number of them).
    const close = () => {
      links.delete(link);
      tcp.destroy();
      ws.terminate();
    };
    tcp.on("error", close);
    tcp.on("close", close);
    stream.on("error", close);
    ws.on("close", close);
  });
  await new Promise<void>((resolve) => http.listen(0, host, resolve));
  const address = http.address();
  const wsPort = typeof address === "object" && address ? address.port : 0;

  const bridge: PgBridge = {
    wsProxy: `${host}:${wsPort}`,
    stats: () => ({ open: links.size, peak, opened }),
    freeze() {
      mode = "frozen";
      for (const link of links) {
        link.tcp.pause();
        link.ws.pause();
      }
    },
    kill() {
      mode = "dead";
      for (const link of links) {
        link.tcp.destroy();
        link.ws.terminate();
      }
    },
    resume() {
      mode = "normal";
      for (const link of links) {
        link.ws.resume();
        link.resume();
      }
      peak = links.size;
      opened = 0;
    },
    async stop() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };

  function control(req: IncomingMessage, res: ServerResponse): void {
    const action = new URL(req.url ?? "/", "http://bridge").pathname.replace(/^\/_control\//, "");
    if (req.method === "POST" && (action === "freeze" || action === "kill" || action === "resume"))
      bridge[action]();
    else if (!(req.method === "GET" && action === "stats")) return notFound(res);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ mode, ...bridge.stats() }));
  }

  return bridge;
}

function notFound(res: ServerResponse): void {
  res.writeHead(404).end();
}
