import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import type { WaMessage } from "../companion/wa-socket.ts";
import { controlHandler } from "./whatsapp-control.ts";

/**
 * A simulated WhatsApp for a companion in another process, over loopback (bridge-socket.ts is the
 * companion's end). Each connection is one Baileys socket: an unregistered device gets a QR ref and
 * waits for `scan()`; a registered one opens at once. The test or simulator delivers messages in
 * Baileys' `messages.upsert` shape, closes the socket with a DisconnectReason code, and reads what
 * the connector sent, read and typed.
 */
export interface FakeWhatsAppServer {
  /** Where the companion's bridge socket connects (ws://). */
  url: string;
  /** The same port over HTTP: `/_control/…` for `edgeclaw simulate` (whatsapp-control.ts). */
  controlUrl: string;
  /** Whether the current connection is open (a linked device). */
  isOpen(): boolean;
  /** Connections so far (one per socket the connector made). */
  connections(): number;
  /** Resolves once the current connection is open (a linked device). */
  waitOpen(timeoutMs?: number): Promise<void>;
  scan(me?: { id: string; lid?: string }): void;
  deliver(messages: WaMessage[], type?: "notify" | "append"): void;
  close(statusCode: number): void;
  readonly calls: Array<{ method: string; args: unknown[] }>;
  stop(): Promise<void>;
}

export async function startFakeWhatsAppServer(): Promise<FakeWhatsAppServer> {
  let fake: FakeWhatsAppServer | undefined;
  const http = createServer((request, response) => controlHandler(fake!)(request, response));
  const server = new WebSocketServer({ server: http });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  const port = (http.address() as AddressInfo).port;
  const calls: Array<{ method: string; args: unknown[] }> = [];
  let current: { ws: WebSocket; open: boolean } | undefined;
  let count = 0;
  const send = (frame: unknown) => current?.ws.send(JSON.stringify(frame));
  const event = (name: string, payload: unknown) => send({ t: "event", event: name, payload });

  server.on("connection", (ws) => {
    count += 1;
    const connection = { ws, open: false };
    current = connection;
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as
        | { t: "hello"; registered: boolean }
        | { t: "call"; id: number; method: string; args: unknown[] };
      if (frame.t === "hello") {
        event("connection.update", { connection: "connecting" });
        if (frame.registered) {
          connection.open = true;
          event("connection.update", { connection: "open" });
        } else event("connection.update", { qr: `2@sim-ref-${count},noise,identity,adv` });
        return;
      }
      calls.push({ method: frame.method, args: frame.args });
      const [, , options] = frame.args as [unknown, unknown, { messageId?: string } | undefined];
      const result =
        frame.method === "sendMessage"
          ? { key: { remoteJid: frame.args[0], id: options?.messageId, fromMe: true } }
          : frame.method === "requestPairingCode"
            ? "SIMU1234"
            : null;
      ws.send(JSON.stringify({ t: "reply", id: frame.id, result }));
    });
  });

  fake = {
    url: `ws://127.0.0.1:${port}`,
    controlUrl: `http://127.0.0.1:${port}`,
    isOpen: () => current?.open === true,
    connections: () => count,
    waitOpen: async (timeoutMs = 20_000) => {
      const until = Date.now() + timeoutMs;
      while (!current?.open) {
        if (Date.now() > until) throw new Error("the simulated WhatsApp socket did not open");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    scan: (me = { id: "15550001111:7@s.whatsapp.net", lid: "99887766554433:7@lid" }) =>
      send({ t: "scan", me }),
    deliver: (messages, type = "notify") => event("messages.upsert", { messages, type }),
    close: (statusCode) => event("connection.update", { connection: "close", statusCode }),
    calls,
    stop: async () => {
      for (const client of server.clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  return fake;
}
