import type { DeviceLink } from "../../functions/channels/companion/device-link.ts";

/**
 * The contract between the companion's core (outbox, ingress client, lease, state, supervisor) and
 * one connector (a platform's socket or poll loop for one account). A connector holds no agent or
 * access logic: it turns the platform's live stream into raw events, and the Worker parses them with
 * the channel's own parser (functions/channels/channel.ts `SocketPieces`).
 */

/** The account the Worker assigned, as `GET /internal/companion/accounts` returned it. */
export interface ConnectorAccount {
  channel: string;
  accountId: string;
  label: string;
  /** Non-secret settings (intents, base URLs, …), channel-specific JSON. */
  settings: Record<string, unknown>;
  /** Secret name → env var id; read with ConnectorContext.secret(name). */
  secretEnv: Record<string, string>;
}

/** One raw platform event; `eventId` must be stable across redeliveries (it keys the local outbox). */
export interface RawEvent {
  eventId: string;
  payload: unknown;
}

export type ConnectorState = "starting" | "connecting" | "ready" | "backoff" | "fatal" | "stopped";

export interface ConnectorStatus {
  state: ConnectorState;
  /** A device link the connector waits for or holds (WhatsApp). */
  link?: DeviceLink;
  /** Unix ms of the last event handed to submit(). */
  lastEventAt?: number;
  /** Last error, already free of secrets (never a token, never message text). */
  lastError?: string;
}

export interface ConnectorContext {
  readonly account: ConnectorAccount;
  /** The secret named in account.secretEnv, from the companion's environment; undefined when unset. */
  secret(name: string): string | undefined;
  /**
   * Hands events to the durable outbox. Resolves once the Worker answered "stored" (accepted or
   * duplicate) for every one of them — only then may the connector advance its cursor, ack the
   * envelope (Slack) or record the sequence (Discord). Survives a crash: rows left in the outbox are
   * sent again at the next start, before any connector starts.
   */
  submit(events: RawEvent[]): Promise<void>;
  /** Durable connector state (cursor, resume token, session id) in the Worker's companion Durable Object, fenced by this process's lease epoch; a stale epoch rejects. */
  state: {
    get(key: string): Promise<string | undefined>;
    put(key: string, value: string | null): Promise<void>;
    /** Many keys at once (absent from the map = unset). */
    getMany(keys: string[]): Promise<Map<string, string>>;
    /** Many keys under the epoch, all or none per batch of 1000 (a Baileys key set with its counters). */
    putMany(entries: Array<{ key: string; value: string | null }>): Promise<void>;
  };
  setStatus(status: ConnectorStatus): void;
  log(
    level: "debug" | "info" | "warn" | "error",
    message: string,
    fields?: Record<string, unknown>,
  ): void;
  /** Aborted on stop (shutdown, lease lost, reload). */
  readonly signal: AbortSignal;
}

export interface Connector {
  readonly channel: string;
  readonly accountId: string;
  /** Returns once the loop is running (never waits for the platform to connect); errors inside the loop go to setStatus + backoff, not out of here. */
  start(ctx: ConnectorContext): Promise<void>;
  /** Stops reading, lets in-flight submits settle, closes sockets. */
  stop(reason: "shutdown" | "lease-lost" | "reload"): Promise<void>;
}

/** channel id → factory; connectors/index.ts registers one line per connector. */
export type ConnectorFactory = (account: ConnectorAccount) => Connector;

/** Finds a channel's connector (connectors/index.ts: the channel's own folder); undefined = none. */
export type ConnectorSource = (channel: string) => Promise<ConnectorFactory | undefined>;
