import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * A fake Discord Gateway v10 (+ `GET /api/v10/gateway/bot`): HELLO on connect, IDENTIFY → READY
 * (session id, resume_gateway_url, the bot user), RESUME → the missed dispatches replayed in order,
 * then RESUMED (or INVALID_SESSION false for an unknown/invalidated session), heartbeat → ACK,
 * op 1 heartbeat requests. A token the gateway does not accept (not the configured one, or refused
 * by the given check) is closed with 4004. Sequence numbers count per session, as Discord's. Tests
 * drive it: dispatch, close with a code, stop ACKs, send RECONNECT / INVALID_SESSION, and read every
 * frame the client sent. Standalone it has its own server; given `server` (the fake REST API's,
 * discord-api.ts) it takes that server's WebSocket upgrades instead, and the REST fake answers
 * `GET /gateway/bot`.
 */
export interface GatewayOptions {
  /** Share this HTTP server (its upgrades) instead of listening on one of its own. */
  server?: Server;
  /** The bot's user id in READY for a token (Discord's is the token's first segment); default botUserId. */
  botUserIdOf?: (token: string) => string | undefined;
}

export interface GatewayConnection {
  socket: WebSocket;
  path: string;
  received: Array<{ op: number; d?: unknown }>;
  closed: boolean;
  closeCode?: number;
  sessionId?: string;
}

interface Session {
  id: string;
  seq: number;
  events: Array<{ s: number; t: string; d: unknown }>;
  valid: boolean;
}

export class FakeDiscordGateway {
  readonly connections: GatewayConnection[] = [];
  readonly gatewayBotCalls: Array<{ authorization?: string }> = [];
  readonly sessions = new Map<string, Session>();
  heartbeatInterval = 200;
  ackHeartbeats = true;
  readonly botUserId = "1100000000000000001";
  private server: Server;
  private wss: WebSocketServer;
  private sessionCounter = 0;
  private readonly attached: boolean;
  private readonly accepts: (token: unknown) => boolean;
  private readonly botUserIdOf: (token: string) => string | undefined;

  constructor(token: string | ((token: string) => boolean), options: GatewayOptions = {}) {
    this.accepts = (given) =>
      typeof given === "string" && (typeof token === "string" ? given === token : token(given));
    this.botUserIdOf = options.botUserIdOf ?? (() => undefined);
    this.attached = options.server !== undefined;
    this.server =
      options.server ??
      createServer((req, res) => {
        if (req.method === "GET" && req.url === "/api/v10/gateway/bot") {
          this.gatewayBotCalls.push({ authorization: req.headers.authorization });
          res.setHeader("content-type", "application/json");
          const auth = req.headers.authorization ?? "";
          if (!auth.startsWith("Bot ") || !this.accepts(auth.slice(4)))
            return void res
              .writeHead(401)
              .end(JSON.stringify({ message: "401: Unauthorized", code: 0 }));
          return void res.end(
            JSON.stringify({
              url: `ws://127.0.0.1:${this.port}/gw`,
              shards: 1,
              session_start_limit: {
                total: 1000,
                remaining: 999,
                reset_after: 0,
                max_concurrency: 1,
              },
            }),
          );
        }
        res.writeHead(404).end();
      });
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.searchParams.get("v") !== "10" || url.searchParams.get("encoding") !== "json")
        return void socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) =>
        this.accept(ws, url.pathname.replace(/\/+$/, "")),
      );
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get apiBaseUrl(): string {
    return `http://127.0.0.1:${this.port}/api/v10`;
  }

  get live(): GatewayConnection | undefined {
    return this.connections.filter((c) => !c.closed && c.sessionId).at(-1);
  }

  async listen(): Promise<this> {
    if (!this.attached)
      await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  /** A dispatch on the live connection's session (kept for replay on RESUME, as Discord does). */
  dispatch(t: string, d: unknown, connection = this.live): number {
    if (!connection?.sessionId) throw new Error("no live session");
    const session = this.sessions.get(connection.sessionId)!;
    const s = ++session.seq;
    session.events.push({ s, t, d });
    if (!connection.closed) connection.socket.send(JSON.stringify({ op: 0, t, s, d }));
    return s;
  }

  /** Appends to a session without sending (events that happened while the client was away). */
  queue(sessionId: string, t: string, d: unknown): number {
    const session = this.sessions.get(sessionId)!;
    const s = ++session.seq;
    session.events.push({ s, t, d });
    return s;
  }

  send(connection: GatewayConnection, frame: unknown): void {
    connection.socket.send(JSON.stringify(frame));
  }

  closeWith(connection: GatewayConnection, code: number, reason = ""): void {
    connection.socket.close(code, reason);
  }

  async close(): Promise<void> {
    for (const connection of this.connections) connection.socket.terminate();
    this.wss.close();
    if (this.attached) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(ws: WebSocket, path: string): void {
    const connection: GatewayConnection = { socket: ws, path, received: [], closed: false };
    this.connections.push(connection);
    ws.on("close", (code) => {
      connection.closed = true;
      connection.closeCode = code;
      // A client closing with 1000/1001 ends its session (Discord invalidates it).
      if ((code === 1000 || code === 1001) && connection.sessionId)
        this.sessions.get(connection.sessionId)!.valid = false;
    });
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as {
        op: number;
        d?: Record<string, unknown> | number | null;
      };
      connection.received.push(frame);
      this.onFrame(connection, frame);
    });
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatInterval } }));
  }

  private onFrame(connection: GatewayConnection, frame: { op: number; d?: unknown }): void {
    const d = (frame.d ?? {}) as Record<string, unknown>;
    switch (frame.op) {
      case 1:
        if (this.ackHeartbeats) connection.socket.send(JSON.stringify({ op: 11 }));
        return;
      case 2: {
        if (!this.accepts(d.token))
          return void connection.socket.close(4004, "Authentication failed.");
        const id = `session-${++this.sessionCounter}`;
        this.sessions.set(id, { id, seq: 0, events: [], valid: true });
        connection.sessionId = id;
        this.dispatch(
          "READY",
          {
            v: 10,
            session_id: id,
            resume_gateway_url: `ws://127.0.0.1:${this.port}/resume`,
            user: {
              id: this.botUserIdOf(String(d.token)) ?? this.botUserId,
              username: "edgeclaw",
              bot: true,
            },
            guilds: [],
          },
          connection,
        );
        return;
      }
      case 6: {
        if (!this.accepts(d.token))
          return void connection.socket.close(4004, "Authentication failed.");
        const session = this.sessions.get(String(d.session_id));
        if (!session?.valid)
          return void connection.socket.send(JSON.stringify({ op: 9, d: false }));
        connection.sessionId = session.id;
        const from = typeof d.seq === "number" ? d.seq : 0;
        for (const event of session.events.filter((e) => e.s > from))
          connection.socket.send(JSON.stringify({ op: 0, ...event }));
        const s = ++session.seq;
        session.events.push({ s, t: "RESUMED", d: {} });
        connection.socket.send(JSON.stringify({ op: 0, t: "RESUMED", s, d: {} }));
        return;
      }
    }
  }
}

/** A MESSAGE_CREATE `d` as Discord sends it. */
export function messageCreateData(
  id: string,
  content: string,
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    channel_id: "1300000000000000011",
    guild_id: "1300000000000000001",
    author: { id: "1200000000000000002", username: "ada" },
    content,
    type: 0,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    mentions: [],
    mention_roles: [],
    attachments: [],
    ...extra,
  };
}
