import { EventEmitter } from "node:events";
import WebSocket from "ws";
import type {
  WaAuthRuntime,
  WaEventMap,
  WaMessage,
  WaMessageKey,
  WaRuntime,
  WaSocket,
  WaSocketOptions,
} from "../companion/wa-socket.ts";

/**
 * Baileys' socket as a stand-in reached over a loopback WebSocket, for a companion running in its
 * own process (`EDGECLAW_WHATSAPP_SIMULATOR_URL`: the durability test's SIGKILL, `simulate`). The
 * simulated WhatsApp (fake-whatsapp-server.ts) sends Baileys' event payloads as they are
 * (`{ t: "event", event, payload }`); what the connector calls (sendMessage, readMessages,
 * sendPresenceUpdate, requestPairingCode) goes back as `{ t: "call", id, method, args }` and is
 * answered. A scan (`{ t: "scan" }`) registers the device here, where its auth state lives, as
 * WhatsApp's does: pre-keys through the key store, creds.update, then close 515.
 */
export function bridgeRuntime(url: string, helpers: WaAuthRuntime): WaRuntime {
  return { ...helpers, socket: (options) => new BridgeSocket(url, options) };
}

class BridgeSocket implements WaSocket {
  private readonly emitter = new EventEmitter();
  private readonly ws: WebSocket;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void }
  >();
  private calls = 0;
  user: { id: string; lid?: string } | undefined;
  readonly ev = {
    on: <E extends keyof WaEventMap>(event: E, listener: (payload: WaEventMap[E]) => void) => {
      this.emitter.on(event, listener);
    },
    removeAllListeners: (event: keyof WaEventMap) => {
      this.emitter.removeAllListeners(event);
    },
  };

  constructor(
    url: string,
    private readonly options: WaSocketOptions,
  ) {
    this.ws = new WebSocket(url);
    this.ws.on("open", () => {
      const { registered, me } = options.auth.creds;
      this.ws.send(JSON.stringify({ t: "hello", registered: registered === true, me }));
    });
    this.ws.on("message", (data) => void this.onFrame(JSON.parse(String(data)) as Frame));
    this.ws.on("close", () => this.closed(428));
    this.ws.on("error", () => undefined); // followed by close
  }

  private async onFrame(frame: Frame): Promise<void> {
    if (frame.t === "reply") {
      const waiting = this.pending.get(frame.id);
      this.pending.delete(frame.id);
      if (frame.error) waiting?.reject(new Error(frame.error));
      else waiting?.resolve(frame.result);
    } else if (frame.t === "event") {
      if (frame.event === "connection.update" && frame.payload.connection === "open") {
        const me = this.options.auth.creds.me;
        this.user = me ? { id: me.id, ...(me.lid ? { lid: me.lid } : {}) } : undefined;
      }
      if (frame.event === "connection.update" && frame.payload.connection === "close")
        return this.closed(frame.payload.statusCode);
      this.emitter.emit(frame.event, frame.payload);
    } else if (frame.t === "scan") {
      const preKeys = Object.fromEntries(
        Array.from({ length: 30 }, (_, i) => [
          String(i + 1),
          { public: new Uint8Array(32).fill(i), private: new Uint8Array(32).fill(i + 1) },
        ]),
      );
      await this.options.auth.keys.set({ "pre-key": preKeys });
      this.emitter.emit("creds.update", {
        me: frame.me,
        registered: true,
        nextPreKeyId: 31,
        firstUnuploadedPreKeyId: 31,
      });
      this.ws.close();
      this.closed(515);
    }
  }

  private done = false;

  private closed(statusCode: number | undefined): void {
    if (this.done) return;
    this.done = true;
    for (const waiting of this.pending.values()) waiting.reject(new Error("Connection Closed"));
    this.pending.clear();
    const error = Object.assign(new Error("Connection Closed"), { output: { statusCode } });
    this.emitter.emit("connection.update", { connection: "close", lastDisconnect: { error } });
    this.ws.close();
  }

  private call<T>(method: string, args: unknown[]): Promise<T> {
    if (this.done || this.ws.readyState !== WebSocket.OPEN)
      return Promise.reject(new Error("Connection Closed"));
    const id = ++this.calls;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ t: "call", id, method, args }));
    });
  }

  sendMessage(
    jid: string,
    content: { text: string },
    options: { messageId: string; quoted?: WaMessage },
  ) {
    return this.call<{ key: WaMessageKey }>("sendMessage", [jid, content, options]);
  }

  readMessages(keys: WaMessageKey[]) {
    return this.call<void>("readMessages", [keys]);
  }

  sendPresenceUpdate(type: string, jid?: string) {
    return this.call<void>("sendPresenceUpdate", [type, jid]);
  }

  requestPairingCode(phoneNumber: string) {
    return this.call<string>("requestPairingCode", [phoneNumber]);
  }

  end(): void {
    this.done = true;
    this.ws.close();
  }
}

type Frame =
  | { t: "reply"; id: number; result?: unknown; error?: string }
  | {
      t: "event";
      event: keyof WaEventMap;
      payload: Record<string, unknown> & { statusCode?: number };
    }
  | { t: "scan"; me: { id: string; lid?: string } };
