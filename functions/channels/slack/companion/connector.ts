import type {
  ConnectorFactory,
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorStatus,
} from "../../../../companion/src/connector.ts";
import { JsonSocket, type SocketEnd } from "../../../../companion/src/connectors/json-socket.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  sleep,
  type BackoffOptions,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";

/**
 * Slack Socket Mode for one app (docs.slack.dev "Using Socket Mode"): `apps.connections.open` with
 * the app-level token gives a one-use wss URL; Slack greets with `hello`, then sends envelopes
 * (`events_api`, `interactive`, `slash_commands`, each with an `envelope_id`). Each envelope goes to
 * the durable outbox unchanged (the Worker parses its payload like a Request URL body) and is acked
 * with `{ envelope_id }` only after submit() resolved, i.e. after the Worker stored it: an unacked
 * envelope is redelivered by Slack, and the Worker's dedup makes that harmless.
 * `disconnect` (refresh_requested / warning): a new connection is opened before the old one is
 * closed, so nothing is missed across the switch; `link_disabled` (Socket Mode turned off for the
 * app) stops the connector. Any other loss reconnects with bounded backoff; auth errors are fatal.
 */

export interface SlackConnectorOptions {
  backoff?: BackoffOptions;
  /** The client's ping cadence and pong timeout (OpenClaw fixes the pong timeout at 15 s). */
  pingIntervalMs?: number;
  pongTimeoutMs?: number;
  /** How long Slack may take to say `hello` on a new socket. */
  helloTimeoutMs?: number;
  /** How long a replaced connection may finish its in-flight acks before it is closed. */
  drainMs?: number;
}

/** apps.connections.open errors that no retry can fix (token wrong, revoked, not an app token, …). */
const PERMANENT_ERRORS = new Set([
  "invalid_auth",
  "not_authed",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "not_allowed_token_type",
  "missing_scope",
  "no_permission",
  "ekm_access_denied",
  "invalid_token",
]);

class PermanentError extends Error {}

export function slackConnector(
  account: ConnectorAccount,
  options: SlackConnectorOptions = {},
): Connector {
  return new SlackSocketModeConnector(account, options);
}

/** What the companion runs for an account of this channel (companion/src/connectors/index.ts finds it here). */
export const connector: ConnectorFactory = (account) => slackConnector(account);

type LinkEnd =
  | { kind: "closed"; end: SocketEnd }
  | { kind: "refresh"; reason: string }
  | { kind: "disabled" };

/** One Socket Mode connection: its socket, the acks still owed on it, and how it ended. */
class SlackLink {
  readonly inflight = new Set<Promise<void>>();
  readonly socket: JsonSocket;
  readonly ended: Promise<LinkEnd>;
  readonly hello: Promise<void>;
  private reading = true;

  constructor(
    url: string,
    options: Required<SlackConnectorOptions>,
    onEnvelope: (link: SlackLink, envelope: Record<string, unknown>) => void,
  ) {
    let endWith!: (end: LinkEnd) => void;
    let greeted!: () => void;
    this.ended = new Promise((resolve) => (endWith = resolve));
    this.hello = new Promise((resolve) => (greeted = resolve));
    this.socket = new JsonSocket(
      url,
      { pingIntervalMs: options.pingIntervalMs, pongTimeoutMs: options.pongTimeoutMs },
      (message) => {
        if (!this.reading || typeof message !== "object" || message === null) return;
        const frame = message as Record<string, unknown>;
        if (frame.type === "hello") return greeted();
        if (frame.type === "disconnect") {
          const reason = typeof frame.reason === "string" ? frame.reason : "unknown";
          return endWith(
            reason === "link_disabled" ? { kind: "disabled" } : { kind: "refresh", reason },
          );
        }
        if (typeof frame.envelope_id === "string" && frame.envelope_id) onEnvelope(this, frame);
      },
    );
    void this.socket.ended.then((end) => endWith({ kind: "closed", end }));
  }

  /** Stops handing envelopes on (Slack redelivers what this link never acks), then closes once the acks owed settled. */
  async retire(drainMs: number): Promise<void> {
    this.reading = false;
    await Promise.race([
      Promise.allSettled([...this.inflight]),
      new Promise((resolve) => setTimeout(resolve, drainMs).unref()),
    ]);
    this.socket.close(1000, "replaced");
  }
}

class SlackSocketModeConnector implements Connector {
  readonly channel = "slack";
  readonly accountId: string;
  private readonly options: Required<SlackConnectorOptions>;
  private readonly stopper = new AbortController();
  private readonly links = new Set<SlackLink>();
  private loop: Promise<void> = Promise.resolve();
  private status: ConnectorStatus = { state: "starting" };

  constructor(
    private readonly account: ConnectorAccount,
    options: SlackConnectorOptions,
  ) {
    this.accountId = account.accountId;
    this.options = {
      backoff: DEFAULT_BACKOFF,
      pingIntervalMs: 5_000,
      pongTimeoutMs: 15_000,
      helloTimeoutMs: 10_000,
      drainMs: 5_000,
      ...options,
    };
  }

  async start(ctx: ConnectorContext): Promise<void> {
    const signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
    this.loop = this.run(ctx, signal).catch((error: unknown) =>
      this.report(ctx, { state: "fatal", lastError: messageOf(error) }),
    );
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
  }

  private async run(ctx: ConnectorContext, signal: AbortSignal): Promise<void> {
    const backoff = new ReconnectBackoff(this.options.backoff);
    while (!signal.aborted) {
      this.report(ctx, { state: "connecting" });
      try {
        await this.session(ctx, signal, backoff);
      } catch (error) {
        if (error instanceof PermanentError) {
          ctx.log("error", "slack socket mode stopped", {
            account: this.accountId,
            reason: error.message,
          });
          this.report(ctx, { state: "fatal", lastError: error.message });
          await this.closeAll();
          return;
        }
        this.report(ctx, { state: "backoff", lastError: messageOf(error) });
        ctx.log("warn", "slack socket mode connection failed; retrying", {
          account: this.accountId,
          reason: messageOf(error),
        });
      }
      if (signal.aborted) break;
      this.report(ctx, { state: "backoff" });
      await sleep(backoff.nextDelayMs(), signal);
    }
    await this.closeAll();
    this.report(ctx, { state: "stopped" });
  }

  /** One connected stretch: returns when the connection is lost with no replacement. */
  private async session(
    ctx: ConnectorContext,
    signal: AbortSignal,
    backoff: ReconnectBackoff,
  ): Promise<void> {
    let link = await this.openLink(ctx, signal);
    backoff.connected();
    this.report(ctx, { state: "ready", lastError: undefined });
    const aborted = new Promise<"aborted">((resolve) =>
      signal.addEventListener("abort", () => resolve("aborted"), { once: true }),
    );
    for (;;) {
      const end = await Promise.race([link.ended, aborted]);
      if (end === "aborted") return;
      if (end.kind === "disabled")
        throw new PermanentError(
          "Slack disabled Socket Mode for this app (disconnect: link_disabled)",
        );
      if (end.kind === "closed") {
        this.forget(link);
        throw new Error(`connection lost: ${end.end.reason}`);
      }
      // refresh_requested / warning: the old socket keeps working for a few seconds; switch first.
      ctx.log("info", "slack asked to reconnect; opening the next connection first", {
        account: this.accountId,
        reason: end.reason,
      });
      const previous = link;
      try {
        link = await this.openLink(ctx, signal);
      } finally {
        void previous.retire(this.options.drainMs).then(() => this.forget(previous));
      }
    }
  }

  private async openLink(ctx: ConnectorContext, signal: AbortSignal): Promise<SlackLink> {
    const url = await this.connectionUrl(ctx, signal);
    const link = new SlackLink(url, this.options, (from, envelope) =>
      this.forward(ctx, from, envelope),
    );
    this.links.add(link);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      link.hello.then(() => "hello" as const),
      link.ended.then(() => "ended" as const),
      new Promise<"timeout">(
        (resolve) => (timer = setTimeout(() => resolve("timeout"), this.options.helloTimeoutMs)),
      ),
      new Promise<"aborted">((resolve) =>
        signal.addEventListener("abort", () => resolve("aborted"), { once: true }),
      ),
    ]);
    clearTimeout(timer);
    if (outcome === "hello") return link;
    link.socket.close(1000, outcome);
    this.forget(link);
    if (outcome === "ended") {
      const end = await link.ended;
      if (end.kind === "disabled")
        throw new PermanentError(
          "Slack disabled Socket Mode for this app (disconnect: link_disabled)",
        );
      throw new Error(
        `socket ended before hello: ${end.kind === "closed" ? end.end.reason : end.reason}`,
      );
    }
    throw new Error(
      outcome === "timeout" ? `no hello within ${this.options.helloTimeoutMs} ms` : "stopped",
    );
  }

  /** apps.connections.open: a fresh wss URL for every connection (each URL is good for one connect). */
  private async connectionUrl(ctx: ConnectorContext, signal: AbortSignal): Promise<string> {
    const token = ctx.secret("appToken");
    if (!token)
      throw new PermanentError(
        `no app token: set ${this.account.secretEnv.appToken ?? "channels.slack appToken (a SecretRef)"} in the companion's environment`,
      );
    const base =
      typeof this.account.settings.apiBaseUrl === "string"
        ? this.account.settings.apiBaseUrl
        : "https://slack.com/api/";
    const response = await fetch(
      new URL("apps.connections.open", base.endsWith("/") ? base : `${base}/`),
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        signal: AbortSignal.any([signal, AbortSignal.timeout(15_000)]),
      },
    );
    if (response.status === 401 || response.status === 403)
      throw new PermanentError(`apps.connections.open answered HTTP ${response.status}`);
    if (!response.ok) throw new Error(`apps.connections.open answered HTTP ${response.status}`);
    const body = (await response.json().catch(() => ({}))) as {
      ok?: unknown;
      url?: unknown;
      error?: unknown;
    };
    if (body.ok === true && typeof body.url === "string" && /^wss?:\/\//.test(body.url))
      return body.url;
    const error = typeof body.error === "string" ? body.error : "no url in the answer";
    if (PERMANENT_ERRORS.has(error)) throw new PermanentError(`apps.connections.open: ${error}`);
    throw new Error(`apps.connections.open: ${error}`);
  }

  /** Outbox first, ack second: the ack goes out only once the Worker stored the envelope. */
  private forward(ctx: ConnectorContext, link: SlackLink, envelope: Record<string, unknown>): void {
    const envelopeId = envelope.envelope_id as string;
    const done: Promise<void> = ctx
      .submit([{ eventId: slackEventId(envelope), payload: envelope }])
      .then(async () => {
        this.report(ctx, { lastEventAt: Date.now() });
        if (!(await link.socket.send({ envelope_id: envelopeId })))
          ctx.log(
            "info",
            "stored, but the socket closed before the ack; Slack will redeliver (deduplicated)",
            { account: this.accountId },
          );
      })
      .catch((error: unknown) =>
        ctx.log("warn", "envelope not stored; left unacked for Slack to redeliver", {
          account: this.accountId,
          reason: messageOf(error),
        }),
      )
      .finally(() => link.inflight.delete(done));
    link.inflight.add(done);
  }

  private forget(link: SlackLink): void {
    this.links.delete(link);
  }

  private async closeAll(): Promise<void> {
    await Promise.all([...this.links].map((link) => link.retire(this.options.drainMs)));
    this.links.clear();
  }

  private report(ctx: ConnectorContext, change: Partial<ConnectorStatus>): void {
    this.status = { ...this.status, ...change };
    ctx.setStatus(this.status);
  }
}

/**
 * The outbox key: the Events API `event_id` when there is one (stable across Slack's redeliveries,
 * which may come in a new envelope), else the envelope id.
 */
export function slackEventId(envelope: Record<string, unknown>): string {
  const payload = envelope.payload as { event_id?: unknown } | undefined;
  if (envelope.type === "events_api" && typeof payload?.event_id === "string")
    return `event:${payload.event_id}`;
  return `envelope:${String(envelope.envelope_id)}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
