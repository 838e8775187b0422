import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

/**
 * A fake Slack for Socket Mode: `POST /api/apps.connections.open` (Bearer app token, answers
 * `{ ok, url }` with a one-use ticket) and the WebSocket behind that URL, which greets with `hello`
 * like Slack. The test drives each connection: send envelopes / disconnect, read the acks.
 * Standalone it has its own server; given `server` (the fake Web API's, slack-api.ts) it takes that
 * server's upgrades and the Web API hands it `apps.connections.open` (`open`).
 */
export interface FakeSlackConnection {
  ticket: string;
  socket: WebSocket;
  /** Frames the client sent (acks), parsed. */
  received: Array<Record<string, unknown>>;
  /** Date.now() at each received frame, same order. */
  receivedAt: number[];
  closed: boolean;
  openedAt: number;
  closedAt?: number;
}

export class FakeSlackSocketMode {
  readonly connections: FakeSlackConnection[] = [];
  readonly opens: Array<{ authorization: string | undefined }> = [];
  /** Next apps.connections.open answers: `{ ok:false, error }` entries are used up first. */
  readonly openErrors: string[] = [];
  sendHello = true;
  private server: Server;
  private wss: WebSocketServer;
  private tickets = 0;
  private readonly validTickets = new Set<string>();

  private readonly accepts: (token: string) => boolean;
  private readonly attached: boolean;

  constructor(appToken: string | ((token: string) => boolean), options: { server?: Server } = {}) {
    this.accepts = typeof appToken === "string" ? (token) => token === appToken : appToken;
    this.attached = options.server !== undefined;
    this.server =
      options.server ??
      createServer((req, res) => {
        if (req.method !== "POST" || req.url !== "/api/apps.connections.open") {
          res.writeHead(404).end();
          return;
        }
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(this.open(req.headers.authorization)));
      });
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on("upgrade", (req, socket, head) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/link/") {
        if (!this.attached) socket.destroy();
        return; // another upgrade of a shared server is its business
      }
      const ticket = url.searchParams.get("ticket") ?? "";
      if (!this.validTickets.delete(ticket)) return void socket.destroy(); // one use per URL, as Slack's
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const connection: FakeSlackConnection = {
          ticket,
          socket: ws,
          received: [],
          receivedAt: [],
          closed: false,
          openedAt: performance.now(),
        };
        this.connections.push(connection);
        ws.on("message", (data) => {
          connection.received.push(JSON.parse(data.toString()) as Record<string, unknown>);
          connection.receivedAt.push(Date.now());
        });
        ws.on("close", () => {
          connection.closed = true;
          connection.closedAt = performance.now();
        });
        if (this.sendHello)
          ws.send(
            JSON.stringify({
              type: "hello",
              num_connections: 1,
              debug_info: { host: "fake", approximate_connection_time: 18060 },
              connection_info: { app_id: "A1" },
            }),
          );
      });
    });
  }

  /** `apps.connections.open` for this `Authorization` header: `{ ok, url }` or `{ ok: false, error }`. */
  open(authorization: string | undefined): Record<string, unknown> {
    this.opens.push({ authorization });
    if (!authorization?.startsWith("Bearer ") || !this.accepts(authorization.slice(7)))
      return { ok: false, error: "invalid_auth" };
    const error = this.openErrors.shift();
    if (error) return { ok: false, error };
    const ticket = `t${++this.tickets}`;
    this.validTickets.add(ticket);
    return { ok: true, url: `ws://127.0.0.1:${this.port}/link/?ticket=${ticket}&app_id=A1` };
  }

  /** The newest connection still open (where Slack would send the next envelope). */
  get live(): FakeSlackConnection | undefined {
    return this.connections.filter((connection) => !connection.closed).at(-1);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get apiBaseUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  async listen(): Promise<this> {
    if (!this.attached)
      await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  send(connection: FakeSlackConnection, frame: unknown): void {
    connection.socket.send(JSON.stringify(frame));
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise((resolve) => this.wss.close(resolve));
    if (this.attached) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export function eventsApiEnvelope(
  envelopeId: string,
  eventId: string,
  text = "hello",
): Record<string, unknown> {
  return {
    envelope_id: envelopeId,
    type: "events_api",
    accepts_response_payload: false,
    retry_attempt: 0,
    retry_reason: "",
    payload: {
      type: "event_callback",
      team_id: "T1",
      api_app_id: "A1",
      event_id: eventId,
      event_time: 1700000000,
      event: {
        type: "message",
        channel: "D1",
        channel_type: "im",
        user: "U1",
        text,
        ts: "1700000000.000100",
      },
    },
  };
}
