/**
 * The part of Baileys the connector uses, as its own types: the socket `makeWASocket` returns (its
 * event emitter and the calls the connector makes), the auth state it is given, and the runtime
 * helpers the auth store needs (BufferJSON, initAuthCreds, the key cache). The connector takes a
 * `WaSocketFactory`, so tests hand it a fake that emits Baileys' real event shapes
 * (simulate/fake-wa-socket.ts), and the companion hands it `baileysRuntime()` below.
 *
 * Baileys is loaded only when the first WhatsApp account starts (`import()` of a name held in a
 * variable): a companion without WhatsApp never loads it (~55 MiB of resident memory), esbuild
 * keeps it out of the companion bundle, and the Worker never sees it.
 */

/** A Baileys message key (`WAMessageKey`): the chat, the id, and in a group the author. */
export interface WaMessageKey {
  remoteJid?: string | null;
  id?: string | null;
  fromMe?: boolean | null;
  participant?: string | null;
  [field: string]: unknown;
}

export interface WaMessage {
  key: WaMessageKey;
  message?: Record<string, unknown> | null;
  messageTimestamp?: unknown;
  pushName?: string | null;
  [field: string]: unknown;
}

/** `connection.update`'s payload (Baileys' `Partial<ConnectionState>`). */
export interface WaConnectionUpdate {
  connection?: "open" | "connecting" | "close";
  qr?: string;
  isNewLogin?: boolean;
  lastDisconnect?: { error?: (Error & { output?: { statusCode?: number } }) | undefined };
}

/** The events the connector listens to, with the payloads Baileys emits (BaileysEventMap). */
export interface WaEventMap {
  "connection.update": WaConnectionUpdate;
  "creds.update": Record<string, unknown>;
  "messages.upsert": { messages: WaMessage[]; type: "notify" | "append" | string };
  "messages.reaction": Array<{
    key: WaMessageKey;
    reaction: { key?: WaMessageKey; text?: string | null };
  }>;
}

export interface WaSocket {
  ev: {
    on<E extends keyof WaEventMap>(event: E, listener: (payload: WaEventMap[E]) => void): void;
    removeAllListeners(event: keyof WaEventMap): void;
  };
  user?: { id: string; lid?: string } | undefined;
  sendMessage(
    jid: string,
    content: { text: string },
    options: { messageId: string; quoted?: WaMessage },
  ): Promise<{ key: WaMessageKey } | undefined>;
  readMessages(keys: WaMessageKey[]): Promise<void>;
  sendPresenceUpdate(type: "composing" | "paused" | "available", jid?: string): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  end(error: Error | undefined): void;
}

/** Baileys' `AuthenticationState`: creds (an object Baileys mutates) and the Signal key store. */
export interface WaAuthState {
  creds: Record<string, unknown> & { registered?: boolean; me?: { id: string; lid?: string } };
  keys: WaKeyStore;
}

export interface WaKeyStore {
  get(type: string, ids: string[]): Promise<Record<string, unknown>>;
  set(data: Record<string, Record<string, unknown | null>>): Promise<void>;
}

/** What a logger handed to Baileys must have (its ILogger, pino's shape). */
export interface WaLogger {
  level: string;
  child(bindings: Record<string, unknown>): WaLogger;
  trace(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

export interface WaSocketOptions {
  auth: WaAuthState;
  logger: WaLogger;
  /** A message the device sent, for a recipient's retry request (Baileys' getMessage). */
  getMessage(key: WaMessageKey): Promise<Record<string, unknown> | undefined>;
}

export type WaSocketFactory = (options: WaSocketOptions) => WaSocket;

/** Baileys' helpers the auth store needs (the same ones `useMultiFileAuthState` uses). */
export interface WaAuthRuntime {
  BufferJSON: {
    replacer(key: string, value: unknown): unknown;
    reviver(key: string, value: unknown): unknown;
  };
  initAuthCreds(): Record<string, unknown>;
  /** proto.Message.AppStateSyncKeyData.fromObject: app-state keys are protobuf objects. */
  appStateSyncKey(value: unknown): unknown;
  makeCacheableSignalKeyStore(store: WaKeyStore, logger: WaLogger): WaKeyStore;
  /** A QR code's modules, one string of 0/1 per row (uqr's encoder, loaded with Baileys). */
  qrModules(text: string): string[];
}

export interface WaRuntime extends WaAuthRuntime {
  socket: WaSocketFactory;
}

/** What the connector reads off the `baileys` module (its exports of the same names). */
interface BaileysModule extends Omit<WaAuthRuntime, "appStateSyncKey" | "qrModules"> {
  makeWASocket?: (config: Record<string, unknown>) => WaSocket;
  default: (config: Record<string, unknown>) => WaSocket;
  proto: { Message: { AppStateSyncKeyData: { fromObject(value: unknown): unknown } } };
  Browsers: { ubuntu(name: string): [string, string, string] };
}

/** Baileys itself: the module is resolved at run time from the companion's node_modules. */
export async function baileysRuntime(): Promise<WaRuntime> {
  // Names in variables: neither TypeScript nor esbuild resolves them, so a checkout without the
  // companion's dependencies installed still type-checks, and the bundle leaves them to node_modules.
  const specifier = "baileys";
  const qrSpecifier = "uqr";
  const baileys = (await import(specifier)) as BaileysModule;
  const uqr = (await import(qrSpecifier)) as {
    encode(text: string, options: { border: number }): { data: boolean[][] };
  };
  const makeWASocket = baileys.makeWASocket ?? baileys.default;
  return {
    BufferJSON: baileys.BufferJSON,
    initAuthCreds: baileys.initAuthCreds,
    appStateSyncKey: (value) => baileys.proto.Message.AppStateSyncKeyData.fromObject(value),
    makeCacheableSignalKeyStore: baileys.makeCacheableSignalKeyStore,
    qrModules: (text) =>
      uqr
        .encode(text, { border: 2 })
        .data.map((row) => row.map((dark) => (dark ? "1" : "0")).join("")),
    socket: (options) =>
      makeWASocket({
        auth: options.auth,
        logger: options.logger,
        getMessage: options.getMessage,
        browser: baileys.Browsers.ubuntu("edgeclaw"),
        // The phone stays the one that shows notifications; no history is replayed into the agent.
        markOnlineOnConnect: false,
        syncFullHistory: false,
        shouldSyncHistoryMessage: () => false,
      }),
  };
}

/** Baileys' DisconnectReason codes the link state machine acts on (Types/index.d.ts). */
export const DISCONNECT = {
  connectionClosed: 428,
  connectionLost: 408,
  connectionReplaced: 440,
  loggedOut: 401,
  badSession: 500,
  restartRequired: 515,
  multideviceMismatch: 411,
  forbidden: 403,
  unavailableService: 503,
} as const;
