import type {
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorFactory,
  ConnectorStatus,
  RawEvent,
} from "../../../../companion/src/connector.ts";
import {
  OutboundNotConnectedError,
  type OutboundCommand,
  type OutboundReceipt,
  type OutboundSender,
} from "../../../../companion/src/outbound.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  type BackoffOptions,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";
import { WhatsAppAuthStore } from "./auth-store.ts";
import { messageEvents, reactionEvents, type Self } from "./events.ts";
import { isTerminal, linkTransition, type LinkEvent, type LinkState } from "./link-state.ts";
import { linkReport } from "./link-report.ts";
import { executeCommand } from "./sends.ts";
import { bridgeRuntime } from "../simulate/bridge-socket.ts";
import {
  baileysRuntime,
  type WaAuthState,
  type WaConnectionUpdate,
  type WaLogger,
  type WaRuntime,
  type WaSocket,
} from "./wa-socket.ts";

/**
 * One linked WhatsApp device (Baileys). At start the auth state is read from the Worker's
 * companion state (auth-store.ts); then one socket at a time, driven by the link state machine
 * (link-state.ts): a QR code or a pairing code while unlinked, reported through the connector's
 * status to the Worker (the control page and the CLI show it), `linked` once open, a new socket
 * after `restartRequired` (at once) or a transient close (with backoff), and a stop — never a
 * reconnect — after `loggedOut` (the keys are forgotten: link again) or `connectionReplaced`.
 *
 * Inbound `messages.upsert` and `messages.reaction` go to submit() (events.ts); the companion's
 * outbox has them on disk before the listener returns, and the Worker marks a message read only
 * after it stored it. Sends come through `/v1/outbound` (sends.ts) and need the link open;
 * otherwise they are answered "not connected" and the Worker tries again later.
 */

export interface WhatsAppConnectorOptions {
  /** Baileys, or a test's fake socket with the same runtime helpers. */
  runtime?: () => Promise<WaRuntime>;
  backoff?: BackoffOptions;
}

/** Messages the device sent, kept for a recipient's retry request (Baileys' getMessage). */
const SENT_KEPT = 500;

export function whatsappConnector(
  account: ConnectorAccount,
  options: WhatsAppConnectorOptions = {},
): WhatsAppConnector {
  return new WhatsAppConnector(account, options);
}

/**
 * What the companion runs for an account of this channel (companion/src/connectors/index.ts finds
 * it here): Baileys, or — when the companion's own environment names one — the simulated WhatsApp
 * on loopback (`EDGECLAW_WHATSAPP_SIMULATOR_URL`, simulate/fake-whatsapp-server.ts).
 */
export const connector: ConnectorFactory = (account) =>
  whatsappConnector(account, {
    runtime: async () => {
      const baileys = await baileysRuntime();
      const simulator = process.env.EDGECLAW_WHATSAPP_SIMULATOR_URL;
      return simulator ? bridgeRuntime(simulator, baileys) : baileys;
    },
  });

export class WhatsAppConnector implements Connector, OutboundSender {
  readonly channel = "whatsapp";
  readonly accountId: string;
  private ctx: ConnectorContext | undefined;
  private runtime: WaRuntime | undefined;
  private store: WhatsAppAuthStore | undefined;
  private auth: WaAuthState | undefined;
  private sock: WaSocket | undefined;
  private link: LinkState = { state: "unlinked" };
  private readonly backoff: ReconnectBackoff;
  private retryTimer: NodeJS.Timeout | undefined;
  private qrShown = 0;
  private pairingAsked = false;
  private stopped = false;
  private readonly sent = new Map<string, Record<string, unknown>>();

  constructor(
    private readonly account: ConnectorAccount,
    private readonly options: WhatsAppConnectorOptions,
  ) {
    this.accountId = account.accountId;
    this.backoff = new ReconnectBackoff(options.backoff ?? DEFAULT_BACKOFF);
  }

  /** The link as the state machine has it now. */
  get linkState(): LinkState {
    return this.link;
  }

  async start(ctx: ConnectorContext): Promise<void> {
    this.ctx = ctx;
    this.runtime = await (this.options.runtime ?? baileysRuntime)();
    this.store = new WhatsAppAuthStore(ctx.state, this.runtime);
    this.auth = await this.store.load(this.logger());
    ctx.signal.addEventListener("abort", () => this.halt(), { once: true });
    this.connect();
  }

  async stop(): Promise<void> {
    this.halt();
  }

  async send(command: OutboundCommand): Promise<OutboundReceipt> {
    const sock = this.sock;
    if (!sock || this.link.state !== "linked")
      throw new OutboundNotConnectedError(
        `WhatsApp account ${this.accountId} is ${this.link.state}`,
      );
    return executeCommand(sock, command, (id, content) => {
      this.sent.set(id, content);
      if (this.sent.size > SENT_KEPT) this.sent.delete(this.sent.keys().next().value!);
    });
  }

  private connect(): void {
    if (this.stopped || !this.runtime || !this.auth) return;
    this.closeSocket();
    this.qrShown = 0;
    this.pairingAsked = false;
    const sock = this.runtime.socket({
      auth: this.auth,
      logger: this.logger(),
      getMessage: async (key) => (key.id ? this.sent.get(key.id) : undefined),
    });
    this.sock = sock;
    this.move({ type: "socket", registered: this.auth.creds.registered === true });
    sock.ev.on("creds.update", (update) => {
      if (!this.auth) return;
      Object.assign(this.auth.creds, update);
      this.store?.saveCreds().catch((error: unknown) => this.warn("creds write failed", error));
    });
    sock.ev.on("connection.update", (update) => this.onConnection(sock, update));
    sock.ev.on("messages.upsert", (upsert) => this.forward(messageEvents(upsert, this.self(sock))));
    sock.ev.on("messages.reaction", (reactions) =>
      this.forward(reactionEvents(reactions, this.self(sock))),
    );
  }

  private onConnection(sock: WaSocket, update: WaConnectionUpdate): void {
    if (sock !== this.sock || this.stopped) return; // a replaced socket's last words
    const phone = this.pairingPhone();
    if (update.qr) {
      if (!phone)
        this.move({ type: "qr", qr: update.qr, now: Date.now(), first: this.qrShown++ === 0 });
      else if (!this.pairingAsked) {
        // Baileys can ask for a pairing code once the socket shows it is waiting for a link.
        this.pairingAsked = true;
        sock
          .requestPairingCode(phone.replace(/\D/g, ""))
          .then((pairingCode) => {
            if (sock === this.sock)
              this.move({ type: "pairing-code", pairingCode, phoneNumber: phone });
          })
          .catch((error: unknown) => this.warn("pairing code request failed", error));
      }
    }
    if (update.connection === "open") {
      this.backoff.connected();
      this.move({ type: "open", me: sock.user?.id ?? String(this.auth?.creds.me?.id ?? "") });
    }
    if (update.connection === "close") {
      const statusCode = update.lastDisconnect?.error?.output?.statusCode;
      const { action } = this.move({
        type: "close",
        statusCode,
        now: Date.now(),
        backoffMs: this.backoff.nextDelayMs(),
      });
      this.closeSocket(); // Baileys' own socket is closed already; end() again is a no-op there
      if (action === "reconnect-now") setImmediate(() => this.connect());
      else if (action === "reconnect-later" && this.link.state === "reconnecting") {
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(
          () => this.connect(),
          Math.max(0, this.link.retryAt - Date.now()),
        );
      } else if (action === "forget-and-stop")
        void this.store
          ?.forget()
          .catch((error: unknown) => this.warn("forgetting the session failed", error));
    }
  }

  /** One step of the link state machine, reported to the Worker. */
  private move(event: LinkEvent): ReturnType<typeof linkTransition> {
    const step = linkTransition(this.link, event);
    this.link = step.next;
    const ctx = this.ctx;
    if (!ctx) return step;
    const link = linkReport(step.next, (text) => this.runtime?.qrModules(text) ?? []);
    const status: ConnectorStatus = {
      state: isTerminal(step.next)
        ? "fatal"
        : step.next.state === "linked"
          ? "ready"
          : step.next.state === "reconnecting"
            ? "backoff"
            : "connecting",
      link,
      ...(link.reason ? { lastError: link.reason } : {}),
    };
    ctx.setStatus(status);
    ctx.log(isTerminal(step.next) ? "error" : "info", `whatsapp link ${step.next.state}`, {
      ...(link.reason ? { reason: link.reason } : {}),
    });
    return step;
  }

  private forward(events: RawEvent[]): void {
    if (!events.length || !this.ctx) return;
    // The outbox row is written before submit's first await: on disk before this listener returns.
    this.ctx.submit(events).catch((error: unknown) => this.warn("events not accepted", error));
  }

  private self(sock: WaSocket): Self {
    const user = sock.user ?? this.auth?.creds.me;
    return { id: user?.id ?? "", ...(user?.lid ? { lid: user.lid } : {}) };
  }

  private pairingPhone(): string | undefined {
    const phone = this.account.settings.pairingPhoneNumber;
    return typeof phone === "string" && phone ? phone : undefined;
  }

  private halt(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.closeSocket();
  }

  private closeSocket(): void {
    const sock = this.sock;
    this.sock = undefined;
    if (!sock) return;
    for (const event of [
      "connection.update",
      "creds.update",
      "messages.upsert",
      "messages.reaction",
    ] as const)
      sock.ev.removeAllListeners(event);
    try {
      sock.end(undefined);
    } catch {
      // already closed
    }
  }

  private warn(message: string, error: unknown): void {
    this.ctx?.log("warn", message, {
      error: error instanceof Error ? error.message : String(error),
    });
  }

  /**
   * Baileys' logger: warnings and errors only, by their message and error text — never the objects
   * Baileys attaches (keys, nodes, message content).
   */
  private logger(): WaLogger {
    const log = (level: "warn" | "error") => (obj: unknown, msg?: string) => {
      const error =
        (obj as { err?: { message?: unknown }; error?: { message?: unknown } } | undefined)?.err ??
        (obj as { error?: { message?: unknown } } | undefined)?.error;
      this.ctx?.log(
        level,
        `baileys: ${(msg ?? (typeof obj === "string" ? obj : "")).slice(0, 200)}`,
        {
          ...(typeof error?.message === "string" ? { error: error.message.slice(0, 300) } : {}),
        },
      );
    };
    const logger: WaLogger = {
      level: "warn",
      child: () => logger,
      trace: () => undefined,
      debug: () => undefined,
      info: () => undefined,
      warn: log("warn"),
      error: log("error"),
    };
    return logger;
  }
}
