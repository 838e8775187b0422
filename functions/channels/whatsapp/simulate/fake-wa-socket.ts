import { EventEmitter } from "node:events";
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
 * A stand-in for Baileys' socket (`makeWASocket`), for the connector's tests and the simulator:
 * each socket the connector makes is recorded, and the test drives it with Baileys' own event
 * shapes — `connection.update` with `qr`, `connection: "open"`, `connection: "close"` and a
 * `lastDisconnect.error` carrying `output.statusCode` (a DisconnectReason), `creds.update`,
 * `messages.upsert` and `messages.reaction`. Linking works as with WhatsApp: a fresh device gets QR
 * refs; `scan()` registers it (creds.update with `me` and `registered`, the pre-keys uploaded
 * through the auth state's key store, then close 515 restartRequired), and the next socket opens.
 * What the connector sends, reads and types is recorded on the world.
 */
export class FakeWhatsAppWorld {
  readonly sockets: FakeWaSocket[] = [];
  readonly sent: Array<{ jid: string; text: string; messageId: string; quoted?: WaMessageKey }> =
    [];
  readonly reads: WaMessageKey[] = [];
  readonly presences: Array<{ type: string; jid?: string }> = [];
  readonly pairingRequests: string[] = [];
  /** The number the device is linked to on scan(). */
  phone = "15550001111";
  /** Make sendMessage fail (a lost connection mid-send). */
  failSends = false;

  constructor(private readonly helpers: WaAuthRuntime) {}

  get current(): FakeWaSocket | undefined {
    return this.sockets.at(-1);
  }

  runtime(): WaRuntime {
    return {
      ...this.helpers,
      socket: (options) => {
        const socket = new FakeWaSocket(this, options);
        this.sockets.push(socket);
        queueMicrotask(() => socket.boot());
        return socket;
      },
    };
  }
}

export class FakeWaSocket implements WaSocket {
  private readonly emitter = new EventEmitter();
  ended = false;
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
    private readonly world: FakeWhatsAppWorld,
    readonly options: WaSocketOptions,
  ) {}

  emit<E extends keyof WaEventMap>(event: E, payload: WaEventMap[E]): void {
    this.emitter.emit(event, payload);
  }

  /** As Baileys does on connect: a QR ref for an unregistered device, else the connection opens. */
  boot(): void {
    if (this.ended) return;
    this.emit("connection.update", { connection: "connecting" });
    if (this.options.auth.creds.registered) return this.open();
    this.emit("connection.update", {
      qr: `2@fake-ref-${this.world.sockets.length},noise,identity,adv`,
    });
  }

  open(): void {
    const me = this.options.auth.creds.me;
    this.user = me ? { id: me.id, ...(me.lid ? { lid: me.lid } : {}) } : undefined;
    this.emit("connection.update", { connection: "open" });
  }

  /** The phone scanned the QR (or entered the pairing code): registered, pre-keys uploaded, then 515. */
  async scan(): Promise<void> {
    const preKeys = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [
        String(i + 1),
        { public: new Uint8Array(32).fill(i), private: new Uint8Array(32).fill(i + 1) },
      ]),
    );
    await this.options.auth.keys.set({ "pre-key": preKeys });
    this.emit("creds.update", {
      me: { id: `${this.world.phone}:7@s.whatsapp.net`, lid: "99887766554433:7@lid" },
      registered: true,
      nextPreKeyId: 31,
      firstUnuploadedPreKeyId: 31,
    });
    this.close(515);
  }

  close(statusCode: number | undefined): void {
    const error = Object.assign(new Error(`closed ${statusCode ?? ""}`), {
      output: { statusCode },
    });
    this.emit("connection.update", { connection: "close", lastDisconnect: { error } });
  }

  /** One message as `messages.upsert` carries it (type "notify", or "append" for an offline one). */
  deliver(messages: WaMessage[], type: "notify" | "append" = "notify"): void {
    this.emit("messages.upsert", { messages, type });
  }

  async sendMessage(
    jid: string,
    content: { text: string },
    options: { messageId: string; quoted?: WaMessage },
  ): Promise<{ key: WaMessageKey }> {
    if (this.ended) throw new Error("Connection Closed");
    if (this.world.failSends) throw new Error("Connection Closed");
    this.world.sent.push({
      jid,
      text: content.text,
      messageId: options.messageId,
      ...(options.quoted ? { quoted: options.quoted.key } : {}),
    });
    return { key: { remoteJid: jid, id: options.messageId, fromMe: true } };
  }

  async readMessages(keys: WaMessageKey[]): Promise<void> {
    this.world.reads.push(...keys);
  }

  async sendPresenceUpdate(type: string, jid?: string): Promise<void> {
    this.world.presences.push({ type, jid });
  }

  async requestPairingCode(phoneNumber: string): Promise<string> {
    this.world.pairingRequests.push(phoneNumber);
    return "FAKE1234";
  }

  end(_error: Error | undefined): void {
    this.ended = true;
  }
}
