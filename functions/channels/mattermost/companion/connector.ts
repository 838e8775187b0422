import type {
  ConnectorFactory,
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorStatus,
} from "../../../../companion/src/connector.ts";
import { JsonSocket } from "../../../../companion/src/connectors/json-socket.ts";
import { ChannelFactsCache } from "./channel-facts.ts";
import { ChannelCursors } from "./cursors.ts";
import { eventIdOf, safeJson } from "./event-id.ts";
import { forwardMissedPosts, type Self } from "./repair.ts";
import {
  MattermostAuthError,
  mattermostRest,
  serverRoot,
  websocketUrl,
  type MattermostRest,
} from "./rest.ts";
import { PrivateNetworkError, serverAgent } from "../../../../companion/src/private-network.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  sleep,
  type BackoffOptions,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";

/**
 * Mattermost over its WebSocket (api/v4/websocket) for one bot account. At connect: `GET /users/me`
 * (who the bot is; a bad token is fatal), then the socket with an `authentication_challenge`, then
 * the server's `hello` (its `connection_id`). Server events carry a sequence number per connection;
 * a jump means events were lost, and so does a reconnect the server could not resume (a new
 * connection_id): both are repaired from REST (./repair.ts). Events are forwarded one at a
 * time, in order, as `{ event, self, channelType? }` — the raw event plus what the connection knows
 * (functions/channels/mattermost/payloads.ts); a channel's cursor moves only after submit() resolved.
 * Every request and the socket go through the private-network guard (../private-network.ts) unless
 * the account sets `network.dangerouslyAllowPrivateNetwork`; a refused server is fatal, no request made.
 */

export interface MattermostConnectorOptions {
  backoff?: BackoffOptions;
  pingIntervalMs?: number;
  pongTimeoutMs?: number;
  /** How long the server may take to accept the challenge and say hello. */
  helloTimeoutMs?: number;
}

/** The events the Worker parses; everything else (typing, status, channel_viewed, …) stays here. */
const FORWARDED = new Set([
  "posted",
  "post_edited",
  "post_deleted",
  "reaction_added",
  "reaction_removed",
]);

class FatalError extends Error {}

export function mattermostConnector(
  account: ConnectorAccount,
  options: MattermostConnectorOptions = {},
): Connector {
  return new MattermostConnector(account, options);
}

/** What the companion runs for an account of this channel (companion/src/connectors/index.ts finds it here). */
export const connector: ConnectorFactory = (account) => mattermostConnector(account);

class MattermostConnector implements Connector {
  readonly channel = "mattermost";
  readonly accountId: string;
  private readonly options: Required<MattermostConnectorOptions>;
  private readonly stopper = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private status: ConnectorStatus = { state: "starting" };
  private socket: JsonSocket | undefined;
  /** The last connection, for a resume: its id and the last sequence number handled. */
  private resume: { connectionId: string; seq: number } | undefined;
  private readonly facts = new ChannelFactsCache();

  constructor(
    private readonly account: ConnectorAccount,
    options: MattermostConnectorOptions,
  ) {
    this.accountId = account.accountId;
    this.options = {
      backoff: DEFAULT_BACKOFF,
      pingIntervalMs: 15_000,
      pongTimeoutMs: 30_000,
      helloTimeoutMs: 15_000,
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
    this.socket?.close(1000, "stopping");
    await this.loop;
  }

  private async run(ctx: ConnectorContext, signal: AbortSignal): Promise<void> {
    const token = ctx.secret("botToken");
    const baseUrl =
      typeof this.account.settings.baseUrl === "string"
        ? serverRoot(this.account.settings.baseUrl)
        : undefined;
    if (!token || !baseUrl) {
      this.report(ctx, {
        state: "fatal",
        lastError: !baseUrl
          ? "no baseUrl in the account settings"
          : `no bot token: set ${this.account.secretEnv.botToken ?? "channels.mattermost botToken (a SecretRef)"} in the companion's environment`,
      });
      return;
    }
    let agent: ReturnType<typeof serverAgent>;
    try {
      agent = serverAgent(baseUrl, this.account.settings.dangerouslyAllowPrivateNetwork === true);
    } catch (error) {
      ctx.log("error", "mattermost connector stopped", {
        account: this.accountId,
        reason: messageOf(error),
      });
      this.report(ctx, {
        state: "fatal",
        lastError: `Mattermost server refused: ${messageOf(error)}`,
      });
      return;
    }
    const rest = mattermostRest(baseUrl, token, agent);
    const cursors = new ChannelCursors(ctx);
    await cursors.load();
    const backoff = new ReconnectBackoff(this.options.backoff);
    while (!signal.aborted) {
      this.report(ctx, { state: "connecting" });
      try {
        await this.connection(ctx, signal, { rest, token, baseUrl, cursors, backoff, agent });
      } catch (error) {
        if (
          error instanceof FatalError ||
          error instanceof MattermostAuthError ||
          error instanceof PrivateNetworkError
        ) {
          ctx.log("error", "mattermost connector stopped", {
            account: this.accountId,
            reason: error.message,
          });
          this.report(ctx, { state: "fatal", lastError: error.message });
          return;
        }
        if (signal.aborted) break;
        ctx.log("warn", "mattermost connection lost; reconnecting", {
          account: this.accountId,
          reason: messageOf(error),
        });
        this.report(ctx, { state: "backoff", lastError: messageOf(error) });
      }
      await cursors.flush();
      if (signal.aborted) break;
      await sleep(backoff.nextDelayMs(), signal);
    }
    await cursors.flush();
    this.report(ctx, { state: "stopped" });
  }

  /** One connection, from the challenge to its end (throws why it ended). */
  private async connection(
    ctx: ConnectorContext,
    signal: AbortSignal,
    {
      rest,
      token,
      baseUrl,
      cursors,
      backoff,
      agent,
    }: {
      rest: MattermostRest;
      token: string;
      baseUrl: string;
      cursors: ChannelCursors;
      backoff: ReconnectBackoff;
      agent: ReturnType<typeof serverAgent>;
    },
  ): Promise<void> {
    const me = await rest.get<{ id?: unknown; username?: unknown }>("/users/me", signal);
    if (typeof me.id !== "string" || typeof me.username !== "string")
      throw new Error("GET /users/me answered without id/username");
    const self: Self = { userId: me.id, username: me.username };

    // Ask to resume the previous connection: the server replays what it still holds, or starts afresh.
    const query = this.resume
      ? `?connection_id=${encodeURIComponent(this.resume.connectionId)}&sequence_number=${this.resume.seq + 1}`
      : "";
    let greeted!: (connectionId: string) => void;
    let refused!: (reason: string) => void;
    const hello = new Promise<string>((resolve, reject) => {
      greeted = resolve;
      refused = (reason) => reject(new FatalError(reason));
    });
    hello.catch(() => undefined);
    let queue: Promise<void> = Promise.resolve();
    let expectedSeq: number | undefined;
    let failure: Error | undefined;
    const socket = new JsonSocket(
      websocketUrl(baseUrl) + query,
      {
        pingIntervalMs: this.options.pingIntervalMs,
        pongTimeoutMs: this.options.pongTimeoutMs,
        agent,
      },
      (message) => {
        if (typeof message !== "object" || message === null) return;
        const frame = message as Record<string, unknown>;
        if (frame.seq_reply === 1 && frame.status === "FAIL")
          return refused("the server refused the authentication challenge: check the bot token");
        if (typeof frame.event !== "string") return;
        const seq = typeof frame.seq === "number" ? frame.seq : undefined;
        if (frame.event === "hello") {
          const data = (frame.data ?? {}) as { connection_id?: unknown };
          expectedSeq = (seq ?? 0) + 1;
          return greeted(typeof data.connection_id === "string" ? data.connection_id : "");
        }
        if (seq !== undefined && expectedSeq !== undefined) {
          if (seq > expectedSeq) {
            // Events between expectedSeq and seq never arrived: repair from REST before going on.
            ctx.log("warn", "mattermost events skipped; repairing from REST", {
              account: this.accountId,
              expected: expectedSeq,
              got: seq,
            });
            queue = queue.then(() =>
              forwardMissedPosts(ctx, {
                accountId: this.accountId,
                rest,
                self,
                cursors,
                facts: this.facts,
                signal,
              }),
            );
          }
          expectedSeq = Math.max(expectedSeq, seq + 1);
        }
        if (!FORWARDED.has(frame.event)) return;
        queue = queue
          .then(() => this.forward(ctx, rest, self, cursors, frame, signal))
          .then(() => {
            if (seq !== undefined && this.resume) this.resume.seq = Math.max(this.resume.seq, seq);
          });
        queue.catch((error: unknown) => {
          // A submit that failed leaves this connection: reconnecting repairs from the last cursor.
          failure ??= error instanceof Error ? error : new Error(String(error));
          socket.close(1011, "event not stored");
        });
      },
    );
    this.socket = socket;
    try {
      await socket.opened;
      await socket.send({ seq: 1, action: "authentication_challenge", data: { token } });
      const connectionId = await Promise.race([
        hello,
        socket.ended.then((end) =>
          Promise.reject(new Error(`socket closed before hello: ${end.reason}`)),
        ),
        sleep(this.options.helloTimeoutMs, signal).then(() =>
          Promise.reject(new Error(`no hello within ${this.options.helloTimeoutMs} ms`)),
        ),
      ]);
      const resumed =
        this.resume !== undefined &&
        connectionId !== "" &&
        connectionId === this.resume.connectionId;
      this.resume = { connectionId, seq: resumed ? this.resume!.seq : 0 };
      backoff.connected();
      this.report(ctx, { state: "ready", lastError: undefined });
      if (!resumed)
        queue = queue.then(() =>
          forwardMissedPosts(ctx, {
            accountId: this.accountId,
            rest,
            self,
            cursors,
            facts: this.facts,
            signal,
          }),
        );
      const end = await socket.ended;
      await queue.catch(() => undefined);
      if (failure) throw failure;
      throw new Error(`connection closed: ${end.reason}`);
    } finally {
      socket.close();
      this.socket = undefined;
    }
  }

  /** One event into the outbox; a post moves its channel's cursor once stored. */
  private async forward(
    ctx: ConnectorContext,
    rest: MattermostRest,
    self: Self,
    cursors: ChannelCursors,
    frame: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<void> {
    const data = (frame.data ?? {}) as Record<string, unknown>;
    const broadcast = (frame.broadcast ?? {}) as Record<string, unknown>;
    const post =
      typeof data.post === "string"
        ? (safeJson(data.post) as
            | { id?: unknown; user_id?: unknown; channel_id?: unknown; create_at?: unknown }
            | undefined)
        : undefined;
    const channelId =
      typeof post?.channel_id === "string"
        ? post.channel_id
        : typeof broadcast.channel_id === "string"
          ? broadcast.channel_id
          : undefined;
    const statedType = typeof data.channel_type === "string" ? data.channel_type : undefined;
    const statedTeam = typeof data.team_id === "string" ? data.team_id : undefined;
    if (channelId && statedTeam !== undefined)
      this.facts.remember(channelId, { teamId: statedTeam });
    // Edits and reactions carry neither the channel's type nor its team: the Worker needs both to
    // place them where the channel's messages go (access, bindings).
    const learnt =
      channelId && (statedType === undefined || statedTeam === undefined)
        ? await this.facts.lookup(rest, cursors, channelId, signal)
        : {};
    const channelType = statedType ?? learnt.type;
    const teamId = statedTeam === undefined ? learnt.teamId : undefined;

    const reactor =
      typeof data.reaction === "string"
        ? (safeJson(data.reaction) as { user_id?: unknown } | undefined)?.user_id
        : undefined;
    const isOwn = post?.user_id === self.userId || reactor === self.userId;
    if (!isOwn) {
      // The bot's own posts, preview edits and reactions are not forwarded: the Worker would drop them anyway.
      await ctx.submit([
        {
          eventId: eventIdOf(frame, post, data),
          payload: {
            event: frame,
            self,
            ...(channelType && !statedType ? { channelType } : {}),
            ...(teamId ? { teamId } : {}),
          },
        },
      ]);
      this.report(ctx, { lastEventAt: Date.now() });
    }
    if (
      frame.event === "posted" &&
      channelId &&
      channelType &&
      typeof post?.create_at === "number"
    ) {
      cursors.advance(channelId, channelType, post.create_at);
      void cursors.flush();
    }
  }

  private report(ctx: ConnectorContext, change: Partial<ConnectorStatus>): void {
    this.status = { ...this.status, ...change };
    ctx.setStatus(this.status);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
