import type { Agent } from "node:http";
import WebSocket from "ws";

/**
 * One client WebSocket speaking JSON text frames, with a liveness watchdog: a ping every
 * `pingIntervalMs`, and the socket is dropped when no pong (or any frame) came back within
 * `pongTimeoutMs` — a half-open TCP connection otherwise looks alive for minutes. Server pings are
 * answered by `ws` itself. Shared by the Slack Socket Mode and Mattermost connectors.
 */
export interface JsonSocketOptions {
  pingIntervalMs: number;
  pongTimeoutMs: number;
  headers?: Record<string, string>;
  /** Connects through this agent (the private-network guard's, companion/src/private-network.ts). */
  agent?: Agent;
}

export interface SocketEnd {
  code: number;
  /** Why it ended, free of secrets (never the URL: Slack's carries a ticket). */
  reason: string;
}

export class JsonSocket {
  /** Resolves once the socket is closed, for whatever reason (never rejects). */
  readonly ended: Promise<SocketEnd>;
  /** Resolves when the handshake completed; rejects when the socket ended before that. */
  readonly opened: Promise<void>;
  private readonly ws: WebSocket;
  private lastHeardAt = Date.now();
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private endReason: string | undefined;

  constructor(url: string, options: JsonSocketOptions, onMessage: (message: unknown) => void) {
    this.ws = new WebSocket(url, {
      headers: options.headers,
      handshakeTimeout: options.pongTimeoutMs,
      ...(options.agent ? { agent: options.agent } : {}),
    });
    let resolveEnd!: (end: SocketEnd) => void;
    this.ended = new Promise((resolve) => (resolveEnd = resolve));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      void this.ended.then((end) =>
        reject(new Error(`socket closed before it opened: ${end.reason}`)),
      );
    });
    this.opened.catch(() => undefined);
    const heard = () => (this.lastHeardAt = Date.now());
    this.ws.on("open", () => {
      heard();
      this.watchdog = setInterval(() => {
        if (Date.now() - this.lastHeardAt > options.pongTimeoutMs) {
          this.endReason = `no pong within ${options.pongTimeoutMs} ms`;
          this.ws.terminate();
          return;
        }
        if (this.ws.readyState === WebSocket.OPEN) this.ws.ping();
      }, options.pingIntervalMs);
    });
    this.ws.on("pong", heard);
    this.ws.on("ping", heard);
    this.ws.on("message", (data, isBinary) => {
      heard();
      if (isBinary) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        return; // not JSON: nothing a platform sends us; ignored rather than fatal
      }
      onMessage(parsed);
    });
    this.ws.on("error", (error) => {
      this.endReason ??= error.message.replace(/https?:\/\/\S+|wss?:\/\/\S+/g, "<url>");
    });
    this.ws.on("close", (code, reason) => {
      if (this.watchdog) clearInterval(this.watchdog);
      resolveEnd({ code, reason: this.endReason ?? (reason.toString() || `closed (${code})`) });
    });
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends one JSON frame; false when the socket is no longer open (the frame is dropped). */
  send(message: unknown): Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    return new Promise((resolve) =>
      this.ws.send(JSON.stringify(message), (error) => resolve(!error)),
    );
  }

  close(code = 1000, reason = "closing"): void {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.endReason ??= reason;
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close(code, reason);
    // A peer that never answers the close frame must not keep us waiting.
    setTimeout(() => this.ws.terminate(), 1_000).unref();
  }
}
