import type {
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorFactory,
  ConnectorStatus,
  RawEvent,
} from "../../../../companion/src/connector.ts";
import type {
  OutboundCommand,
  OutboundReceipt,
  OutboundSender,
} from "../../../../companion/src/outbound.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  sleep,
  type BackoffOptions,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";
import { senderOf } from "../identity.ts";
import { ManagedDaemon, type ManagedDaemonSettings } from "./daemon.ts";
import { stateJournal } from "./journal.ts";
import { RPC_CODES, SignalRpcError, signalRpc, type SignalRpc } from "./rpc.ts";
import { signalSender } from "./sender.ts";
import { attachmentTexts } from "./text-attachments.ts";

/**
 * Signal for one bot number, through signal-cli's JSON-RPC daemon (`--receive-mode manual`).
 * At start: the daemon (started here for managed-native, daemon.ts) must answer `/api/v1/check`,
 * and `listAccounts` must name the number — a daemon that does not serve it is fatal, named in
 * the status. A daemon started with `-a` answers listAccounts "method not found"; then calls carry
 * no account parameter.
 *
 * Then the awaited poll: `receive {timeout, maxMessages}` returns what signal-cli took off the
 * Signal server during the call. signal-cli acknowledges an envelope to the server once it is in
 * its own on-disk message cache, and forgets it when its answer is written — so the hand-over is
 * that answer: the envelopes go at once to submit(), which writes them to the companion's outbox
 * (SQLite, synchronous FULL) and resolves once the Worker stored each one; only then is the next
 * receive made. A SIGKILL after the answer arrived leaves the rows in the outbox, resent at the
 * next start (deduplicated by sender and timestamp). Every failure is a failed call — visible,
 * retried with backoff, reported in the status — not a stream that stops talking.
 *
 * Forwarded (one RawEvent per envelope, parsed by the Worker, ../parse.ts): envelopes with a data
 * or edit message from others. Receipts, typing, sync and story envelopes are skipped, and so
 * are the errors signal-cli reports for an envelope it could not decrypt (logged by type).
 */

export interface SignalConnectorOptions {
  backoff?: BackoffOptions;
  /**
   * signal-cli's wait for messages within one receive call (`timeout`, seconds); 1 s by default:
   * what signal-cli takes off the server during a call is lost with the call's answer, so a short
   * call keeps that window short (a receive a second costs the loopback daemon next to nothing).
   */
  pollSeconds?: number;
  /** Envelopes one receive call may return (`maxMessages`). */
  maxMessages?: number;
}

class FatalError extends Error {}

export function signalConnector(
  account: ConnectorAccount,
  options: SignalConnectorOptions = {},
): Connector & OutboundSender {
  return new SignalConnector(account, options);
}

/** What the companion runs for an account of this channel (companion/src/connectors/index.ts finds it here). */
export const connector: ConnectorFactory = (account) => signalConnector(account);

interface ReceivedItem {
  account?: unknown;
  envelope?: Record<string, unknown> & { timestamp?: unknown };
  exception?: { type?: unknown };
}

class SignalConnector implements Connector, OutboundSender {
  readonly channel = "signal";
  readonly accountId: string;
  private readonly stopper = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private status: ConnectorStatus = { state: "starting" };
  private readonly rpc: SignalRpc;
  private readonly number: string;
  private daemon: ManagedDaemon | undefined;
  /** Whether calls name the account (a multi-account daemon) — learnt from listAccounts. */
  private multiAccount = true;
  private sender: OutboundSender | undefined;

  constructor(
    private readonly account: ConnectorAccount,
    private readonly options: SignalConnectorOptions,
  ) {
    this.accountId = account.accountId;
    const { settings } = account;
    this.number = typeof settings.number === "string" ? settings.number : "";
    this.rpc = signalRpc(typeof settings.url === "string" ? settings.url : "http://127.0.0.1:8080");
  }

  async start(ctx: ConnectorContext): Promise<void> {
    const signal = AbortSignal.any([ctx.signal, this.stopper.signal]);
    const { settings } = this.account;
    const managed = settings.managed as Omit<ManagedDaemonSettings, "ignoreAttachments"> | null;
    this.daemon = managed
      ? new ManagedDaemon(
          { ...managed, ignoreAttachments: settings.ignoreAttachments === true },
          this.rpc,
          (level, message, fields) =>
            ctx.log(level, message, { account: this.accountId, ...fields }),
        )
      : undefined;
    this.sender = signalSender({
      rpc: this.rpc,
      journal: stateJournal(ctx.state),
      accountParam: () => this.accountParam(),
    });
    this.loop = this.run(ctx, signal).catch((error: unknown) =>
      this.report(ctx, { state: "fatal", lastError: messageOf(error) }),
    );
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
    this.daemon?.stop();
  }

  /** `POST /v1/outbound` for this account (companion/src/http.ts asks the live connector). */
  send(command: OutboundCommand): Promise<OutboundReceipt> {
    if (!this.sender || this.status.state !== "ready")
      throw new Error(`the Signal connector is ${this.status.state}, not ready to send`);
    return this.sender.send(command);
  }

  private accountParam(): Record<string, unknown> {
    return this.multiAccount ? { account: this.number } : {};
  }

  private async run(ctx: ConnectorContext, signal: AbortSignal): Promise<void> {
    if (!/^\+\d{6,15}$/.test(this.number))
      return this.report(ctx, { state: "fatal", lastError: "no E.164 number in the settings" });
    const backoff = new ReconnectBackoff(this.options.backoff ?? DEFAULT_BACKOFF);
    while (!signal.aborted) {
      this.report(ctx, { state: "connecting" });
      try {
        await this.connect(ctx, signal);
        backoff.connected();
        await this.receiveLoop(ctx, signal);
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof FatalError) {
          ctx.log("error", "signal connector stopped", {
            account: this.accountId,
            reason: error.message,
          });
          return this.report(ctx, { state: "fatal", lastError: error.message });
        }
        const wait = backoff.nextDelayMs();
        ctx.log("warn", "signal receive interrupted", {
          account: this.accountId,
          reason: messageOf(error),
          waitMs: wait,
        });
        this.report(ctx, { state: "backoff", lastError: messageOf(error) });
        await sleep(wait, signal);
      }
    }
    this.report(ctx, { state: "stopped" });
  }

  /** The daemon is up (started here when managed) and serves this number. */
  private async connect(ctx: ConnectorContext, signal: AbortSignal): Promise<void> {
    if (this.daemon) {
      ctx.log("info", "starting signal-cli", { args: this.daemon.args().join(" ") });
      await this.daemon.start(signal);
    } else if (!(await this.rpc.check(signal)))
      throw new Error(`the signal-cli daemon at ${this.rpc.url} does not answer /api/v1/check`);
    try {
      const listed = await this.rpc.call<Array<{ number?: unknown }>>(
        "listAccounts",
        {},
        { signal },
      );
      const numbers = (Array.isArray(listed) ? listed : []).map((a) => a.number);
      if (!numbers.includes(this.number))
        throw new FatalError(
          `signal-cli at ${this.rpc.url} has no account ${this.number} (it serves ${numbers.length ? numbers.join(", ") : "none"}): register or link it first`,
        );
      this.multiAccount = true;
    } catch (error) {
      if (!(error instanceof SignalRpcError && error.code === RPC_CODES.methodNotFound))
        throw error;
      // A daemon started with -a ACCOUNT serves that account only and takes no account parameter.
      this.multiAccount = false;
      ctx.log("info", "signal-cli daemon serves one account (-a); its number is not checked", {
        account: this.accountId,
      });
    }
  }

  private async receiveLoop(ctx: ConnectorContext, signal: AbortSignal): Promise<void> {
    const pollSeconds = this.options.pollSeconds ?? 1;
    const settings = this.account.settings;
    const self = {
      number: this.number,
      ...(typeof settings.uuid === "string" ? { uuid: settings.uuid } : {}),
    };
    this.report(ctx, { state: "ready", lastError: undefined });
    while (!signal.aborted) {
      let items: ReceivedItem[];
      try {
        items = await this.rpc.call<ReceivedItem[]>(
          "receive",
          {
            ...this.accountParam(),
            timeout: pollSeconds,
            maxMessages: this.options.maxMessages ?? 100,
          },
          // Not aborted on stop: what signal-cli takes off the server during this call exists only
          // in its answer, so a stopping connector waits the call out (≤ pollSeconds) and stores it.
          { timeoutMs: pollSeconds * 1000 + 30_000 },
        );
      } catch (error) {
        if (error instanceof SignalRpcError && /already being received/i.test(error.message))
          throw new FatalError(
            "the signal-cli daemon receives on its own (--receive-mode on-start): start it with --receive-mode manual",
          );
        if (error instanceof SignalRpcError && error.code === RPC_CODES.invalidParams)
          throw new FatalError(`signal-cli refused the account ${this.number}: ${error.message}`);
        throw error;
      }
      const events: RawEvent[] = [];
      for (const item of Array.isArray(items) ? items : []) {
        if (item.exception)
          ctx.log("warn", "signal-cli could not read an envelope", {
            account: this.accountId,
            type: String(item.exception.type ?? "unknown").slice(0, 100),
          });
        const envelope = item.envelope;
        if (!envelope || !("dataMessage" in envelope || "editMessage" in envelope)) continue;
        const sender = senderOf(envelope as { sourceNumber?: string; sourceUuid?: string });
        if (!sender || typeof envelope.timestamp !== "number") continue;
        const attachmentText = await attachmentTexts(this.rpc, envelope, {
          accountParam: this.accountParam(),
          ignore: settings.ignoreAttachments === true,
          maxBytes: Number(settings.mediaMaxBytes ?? 8 * 1024 * 1024),
          signal,
        });
        events.push({
          eventId: `${sender}:${envelope.timestamp}`,
          payload: { envelope, self, attachmentText },
        });
      }
      if (events.length) {
        await ctx.submit(events);
        this.report(ctx, { state: "ready", lastEventAt: Date.now() });
      }
    }
  }

  private report(ctx: ConnectorContext, next: ConnectorStatus): void {
    this.status = { ...this.status, ...next };
    ctx.setStatus(this.status);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
