import type {
  ConnectorFactory,
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorStatus,
} from "../../../../companion/src/connector.ts";
import { JsonSocket } from "../../../../companion/src/connectors/json-socket.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  sleep,
  type BackoffOptions,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";
import { GatewayContext } from "./context.ts";
import { GatewayResumeState, messageOf } from "./resume-state.ts";
import {
  classifyClose,
  dispatchEventId,
  FORWARDED,
  isGatewayFrame,
  OP,
  RESUMABLE_CLOSE,
  type GatewayFrame,
} from "./protocol.ts";

/**
 * The Discord Gateway for one bot (https://discord.com/developers/docs/events/gateway):
 * `GET /gateway/bot` → wss URL; HELLO → heartbeats every `heartbeat_interval` (the first after a
 * random fraction of it) carrying the last sequence received; a heartbeat not ACKed by the next one
 * marks a zombie connection, which is dropped and resumed. IDENTIFY with the account's intents, or
 * RESUME with the stored session id and sequence; READY stores `session_id` + `resume_gateway_url`.
 *
 * Each dispatch the Worker parses (MESSAGE_CREATE/UPDATE, MESSAGE_REACTION_ADD, GUILD_MEMBER_ADD)
 * goes to the outbox unchanged, plus `context` (thread → parent, the bot's managed roles). Dispatches
 * are handled strictly in order, and the sequence is recorded in companion state only after submit()
 * resolved for it and everything before it: a restart resumes from there and Discord replays the
 * rest (the Worker deduplicates by message id). A submit that fails drops the connection and resumes
 * from the last stored sequence, so nothing is skipped. Close codes: 4004 and 4010–4014 are fatal
 * (status "fatal" with the reason); 4007/4009 and INVALID_SESSION(false) start a new session; anything
 * else resumes. Reconnects back off (bounded, jittered).
 */

export interface DiscordConnectorOptions {
  backoff?: BackoffOptions;
  /** How long the Gateway may take to say HELLO, and then READY/RESUMED. */
  helloTimeoutMs?: number;
  readyTimeoutMs?: number;
  /** Sequence writes to companion state are coalesced to at most one per this interval (and flushed on close). */
  seqFlushMs?: number;
  /** INVALID_SESSION asks for a random 1–5 s wait before the next IDENTIFY/RESUME. */
  invalidSessionDelayMs?: [number, number];
}

type End =
  | { kind: "fatal"; error: string }
  | { kind: "reidentify"; reason: string }
  | { kind: "resume"; reason: string }
  | { kind: "stopped" };

class FatalError extends Error {}

export function discordConnector(
  account: ConnectorAccount,
  options: DiscordConnectorOptions = {},
): Connector {
  return new DiscordGatewayConnector(account, options);
}

/** What the companion runs for an account of this channel (companion/src/connectors/index.ts finds it here). */
export const connector: ConnectorFactory = (account) => discordConnector(account);

class DiscordGatewayConnector implements Connector {
  readonly channel = "discord";
  readonly accountId: string;
  private readonly options: Required<DiscordConnectorOptions>;
  private readonly stopper = new AbortController();
  private readonly context = new GatewayContext();
  private loop: Promise<void> = Promise.resolve();
  private status: ConnectorStatus = { state: "starting" };
  private readonly resume: GatewayResumeState;
  /** Resume attempts in a row that never got a HELLO: after two, the resume URL is given up for /gateway/bot's. */
  private resumeFailures = 0;

  constructor(
    private readonly account: ConnectorAccount,
    options: DiscordConnectorOptions,
  ) {
    this.accountId = account.accountId;
    this.options = {
      backoff: { ...DEFAULT_BACKOFF, initialMs: 1_000 },
      helloTimeoutMs: 15_000,
      readyTimeoutMs: 30_000,
      seqFlushMs: 1_000,
      invalidSessionDelayMs: [1_000, 5_000],
      ...options,
    };
    this.resume = new GatewayResumeState(this.accountId, this.options.seqFlushMs);
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
    await this.resume.load(ctx);
    const backoff = new ReconnectBackoff(this.options.backoff);
    while (!signal.aborted) {
      this.report(ctx, { state: "connecting" });
      let end: End;
      try {
        end = await this.connect(ctx, signal, backoff);
      } catch (error) {
        end =
          error instanceof FatalError
            ? { kind: "fatal", error: error.message }
            : { kind: "resume", reason: messageOf(error) };
      }
      await this.resume.flush(ctx);
      if (end.kind === "stopped" || signal.aborted) break;
      if (end.kind === "fatal") {
        ctx.log("error", "discord gateway stopped", { account: this.accountId, reason: end.error });
        this.report(ctx, { state: "fatal", lastError: end.error });
        return;
      }
      if (end.kind === "reidentify") await this.resume.forget(ctx);
      ctx.log("warn", "discord gateway connection ended; reconnecting", {
        account: this.accountId,
        reason: end.reason,
        resume: this.resume.sessionId !== undefined,
      });
      this.report(ctx, { state: "backoff", lastError: end.reason });
      await sleep(backoff.nextDelayMs(), signal);
    }
    this.report(ctx, { state: "stopped" });
  }

  /** One Gateway connection, from the URL to its end. */
  private async connect(
    ctx: ConnectorContext,
    signal: AbortSignal,
    backoff: ReconnectBackoff,
  ): Promise<End> {
    const token = ctx.secret("token");
    if (!token)
      throw new FatalError(
        `no bot token: set ${this.account.secretEnv.token ?? "DISCORD_BOT_TOKEN"} in the companion's environment`,
      );
    const resuming = this.resume.sessionId !== undefined;
    const base =
      resuming && this.resume.resumeUrl && this.resumeFailures < 2
        ? this.resume.resumeUrl
        : await this.gatewayUrl(token, signal);
    const url = `${base.replace(/\/?(\?.*)?$/, "")}/?v=10&encoding=json`;

    let finish!: (end: End) => void;
    const ended = new Promise<End>((resolve) => (finish = resolve));
    let heartbeat: ReturnType<typeof setTimeout> | undefined;
    let acked = true;
    let lastSeq: number | null = resuming ? (this.resume.storedSeq ?? null) : null;
    let hello = false;
    let ready = false;
    let broken = false;
    let chain: Promise<void> = Promise.resolve();

    const socket = new JsonSocket(
      url,
      { pingIntervalMs: 30_000, pongTimeoutMs: 120_000 },
      (message) => {
        if (!isGatewayFrame(message)) return;
        onFrame(message);
      },
    );
    const drop = (end: End) => {
      finish(end);
      socket.close(
        end.kind === "stopped" && !this.resume.sessionId ? 1000 : RESUMABLE_CLOSE,
        end.kind === "fatal" ? "fatal" : "reconnecting",
      );
    };
    const beat = () => void socket.send({ op: OP.HEARTBEAT, d: lastSeq });
    const scheduleBeats = (interval: number) => {
      const tick = () => {
        if (!acked) return drop({ kind: "resume", reason: "zombie connection: no heartbeat ACK" });
        acked = false;
        beat();
        heartbeat = setTimeout(tick, interval);
      };
      heartbeat = setTimeout(tick, Math.floor(interval * Math.random()));
    };

    const onFrame = (frame: GatewayFrame) => {
      switch (frame.op) {
        case OP.HELLO: {
          hello = true;
          this.resumeFailures = 0;
          const interval = Number(
            (frame.d as { heartbeat_interval?: unknown } | undefined)?.heartbeat_interval,
          );
          scheduleBeats(Number.isFinite(interval) && interval > 0 ? interval : 41_250);
          if (resuming)
            void socket.send({
              op: OP.RESUME,
              d: { token, session_id: this.resume.sessionId, seq: this.resume.storedSeq ?? null },
            });
          else {
            this.resume.storedSeq = undefined;
            void socket.send({
              op: OP.IDENTIFY,
              d: {
                token,
                intents: this.intents(),
                properties: { os: process.platform, browser: "edgeclaw", device: "edgeclaw" },
              },
            });
          }
          return;
        }
        case OP.HEARTBEAT:
          return beat();
        case OP.HEARTBEAT_ACK:
          acked = true;
          return;
        case OP.RECONNECT:
          return drop({ kind: "resume", reason: "Discord asked to reconnect (op 7)" });
        case OP.INVALID_SESSION: {
          const resumable = frame.d === true;
          const [min, max] = this.options.invalidSessionDelayMs;
          void sleep(min + Math.random() * (max - min), signal).then(() =>
            drop(
              resumable
                ? { kind: "resume", reason: "invalid session (resumable)" }
                : { kind: "reidentify", reason: "invalid session" },
            ),
          );
          return;
        }
        case OP.DISPATCH:
          return onDispatch(frame);
      }
    };

    const onDispatch = (frame: GatewayFrame) => {
      const seq = typeof frame.s === "number" ? frame.s : undefined;
      if (seq !== undefined) lastSeq = seq;
      const t = frame.t ?? "";
      const d = (typeof frame.d === "object" && frame.d !== null ? frame.d : {}) as Record<
        string,
        unknown
      >;
      this.context.observe(t, d);
      if (t === "READY") {
        this.resume.sessionId = typeof d.session_id === "string" ? d.session_id : undefined;
        this.resume.resumeUrl =
          typeof d.resume_gateway_url === "string" ? d.resume_gateway_url : undefined;
        void this.resume.saveSession(ctx);
      }
      if (t === "READY" || t === "RESUMED") {
        ready = true;
        backoff.connected();
        this.report(ctx, { state: "ready", lastError: undefined });
      }
      const forward = FORWARDED.has(t);
      const context = forward ? this.context.contextFor(d) : undefined;
      const payload = { op: 0, t, s: frame.s ?? null, d: frame.d, ...(context ? { context } : {}) };
      // Strictly in order: a sequence counts as stored only when it and everything before it is.
      chain = chain.then(async () => {
        if (broken || signal.aborted) return;
        if (forward) {
          try {
            await ctx.submit([{ eventId: dispatchEventId(t, d), payload }]);
            this.report(ctx, { lastEventAt: Date.now() });
          } catch (error) {
            broken = true;
            drop({
              kind: "resume",
              reason: `event not stored (${messageOf(error)}); resuming from the last stored sequence`,
            });
            return;
          }
        }
        if (seq !== undefined) this.resume.markStored(ctx, seq);
      });
    };

    const timer = setTimeout(() => {
      if (!hello)
        drop({ kind: "resume", reason: `no HELLO within ${this.options.helloTimeoutMs} ms` });
    }, this.options.helloTimeoutMs);
    const readyTimer = setTimeout(() => {
      if (!ready)
        drop({
          kind: "resume",
          reason: `no READY/RESUMED within ${this.options.readyTimeoutMs} ms`,
        });
    }, this.options.readyTimeoutMs);
    const onAbort = () => drop({ kind: "stopped" });
    signal.addEventListener("abort", onAbort, { once: true });
    void socket.ended.then(({ code, reason }) => {
      const verdict = classifyClose(code);
      if (verdict.kind === "fatal") finish({ kind: "fatal", error: verdict.error });
      else finish({ kind: verdict.kind, reason: `closed ${code}: ${reason}` });
    });

    const end = await ended;
    if (!hello && resuming) this.resumeFailures += 1;
    clearTimeout(timer);
    clearTimeout(readyTimer);
    if (heartbeat) clearTimeout(heartbeat);
    signal.removeEventListener("abort", onAbort);
    broken = true; // dispatches still queued are not marked stored; a resume replays them
    await Promise.race([chain, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    await socket.ended;
    return end;
  }

  /** `GET /gateway/bot`: the wss URL to connect to (a refused token is fatal). */
  private async gatewayUrl(token: string, signal: AbortSignal): Promise<string> {
    const base =
      typeof this.account.settings.apiBaseUrl === "string"
        ? this.account.settings.apiBaseUrl.replace(/\/+$/, "")
        : "https://discord.com/api/v10";
    const response = await fetch(`${base}/gateway/bot`, {
      headers: { authorization: `Bot ${token}` },
      signal: AbortSignal.any([signal, AbortSignal.timeout(30_000)]),
    });
    if (response.status === 401)
      throw new FatalError(
        "Discord refused the bot token (GET /gateway/bot answered 401): check the token's env var",
      );
    if (!response.ok) throw new Error(`GET /gateway/bot answered HTTP ${response.status}`);
    const body = (await response.json().catch(() => ({}))) as { url?: unknown };
    if (typeof body.url !== "string" || !/^wss?:\/\//.test(body.url))
      throw new Error("GET /gateway/bot gave no wss URL");
    return body.url;
  }

  private intents(): number {
    const intents = Number(this.account.settings.intents);
    // GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT when the Worker named none.
    return Number.isSafeInteger(intents) && intents > 0
      ? intents
      : 1 | (1 << 9) | (1 << 12) | (1 << 15);
  }

  private report(ctx: ConnectorContext, change: Partial<ConnectorStatus>): void {
    this.status = { ...this.status, ...change };
    ctx.setStatus(this.status);
  }
}
