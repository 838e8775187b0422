import type {
  Connector,
  ConnectorAccount,
  ConnectorContext,
  ConnectorFactory,
  ConnectorStatus,
  RawEvent,
} from "../../../../companion/src/connector.ts";
import { PrivateNetworkError, serverAgent } from "../../../../companion/src/private-network.ts";
import {
  DEFAULT_BACKOFF,
  ReconnectBackoff,
  sleep,
  type BackoffOptions,
} from "../../../../companion/src/connectors/reconnect-backoff.ts";
import { MatrixAuthError, MatrixHttpError, matrixClient, type MatrixClient } from "./client.ts";
import { decideInvite, inviteFacts, type InvitePolicy } from "./invites.ts";

/**
 * Matrix `/sync` for one bot account. At start: `GET /account/whoami` (who the bot is; a refused
 * token is fatal) and the bot's `m.direct` account data (which rooms are DMs). Then the long poll:
 * `GET /sync?since=<token>&timeout=…` with the token kept in the Worker's companion state, moved to
 * the answer's `next_batch` only after submit() resolved — after the Worker stored every event of
 * the batch — so a crash anywhere replays the batch (deduplicated by event id) and never skips one.
 * With no stored token (the very first start) the sync carries `initialSyncLimit` events per room
 * (default 0: the bot does not answer what was said before it ran).
 *
 * Forwarded, one RawEvent per event (`{ roomId, event, self, direct, targetSender? }`, parsed by the
 * Worker, functions/channels/matrix/parse.ts): other users' `m.room.message` and `m.reaction`.
 * `m.room.encrypted` is skipped, with one warning per room: only unencrypted rooms are served.
 * Invites are joined before the token moves, by `autoJoin` (invites.ts); a DM invite
 * (`is_direct`) that is joined is added to the bot's `m.direct`.
 */

export interface MatrixConnectorOptions {
  backoff?: BackoffOptions;
  /** The long poll's hold on the homeserver (`timeout`); 30 s by default. */
  pollTimeoutMs?: number;
}

const SINCE_KEY = "since";
/** Events per room in one incremental sync; more makes the batch `limited` (a gap, logged). */
const TIMELINE_LIMIT = 100;
const OWN_EVENTS_KEPT = 2_000;

class FatalError extends Error {}

export function matrixConnector(
  account: ConnectorAccount,
  options: MatrixConnectorOptions = {},
): Connector {
  return new MatrixConnector(account, options);
}

/** What the companion runs for an account of this channel (companion/src/connectors/index.ts finds it here). */
export const connector: ConnectorFactory = (account) => matrixConnector(account);

interface SyncAnswer {
  next_batch?: unknown;
  rooms?: {
    join?: Record<string, { timeline?: { events?: unknown[]; limited?: boolean } }>;
    invite?: Record<string, unknown>;
  };
  account_data?: { events?: Array<{ type?: unknown; content?: unknown }> };
}

interface TimelineEvent {
  event_id: string;
  type: string;
  sender: string;
  content?: { "m.relates_to"?: { event_id?: unknown } };
}

class MatrixConnector implements Connector {
  readonly channel = "matrix";
  readonly accountId: string;
  private readonly stopper = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private status: ConnectorStatus = { state: "starting" };
  /** Room id → the user the bot's m.direct lists it under. */
  private direct = new Map<string, string>();
  private readonly ownEvents = new Set<string>();
  private readonly warnedEncrypted = new Set<string>();

  constructor(
    private readonly account: ConnectorAccount,
    private readonly options: MatrixConnectorOptions,
  ) {
    this.accountId = account.accountId;
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
    const { settings } = this.account;
    const token = ctx.secret("accessToken");
    const homeserver = typeof settings.homeserver === "string" ? settings.homeserver : undefined;
    if (!token || !homeserver)
      return this.report(ctx, {
        state: "fatal",
        lastError: !homeserver
          ? "no homeserver in the account settings"
          : `no access token: set ${this.account.secretEnv.accessToken ?? "channels.matrix accessToken (a SecretRef)"} in the companion's environment`,
      });
    let client: MatrixClient;
    try {
      const agent = serverAgent(homeserver, settings.dangerouslyAllowPrivateNetwork === true);
      client = matrixClient(homeserver, token, agent);
    } catch (error) {
      return this.report(ctx, {
        state: "fatal",
        lastError: `homeserver refused: ${messageOf(error)}`,
      });
    }
    const backoff = new ReconnectBackoff(this.options.backoff ?? DEFAULT_BACKOFF);
    while (!signal.aborted) {
      this.report(ctx, { state: "connecting" });
      try {
        await this.syncLoop(ctx, client, backoff, signal);
      } catch (error) {
        if (signal.aborted) break;
        if (
          error instanceof FatalError ||
          error instanceof MatrixAuthError ||
          error instanceof PrivateNetworkError
        ) {
          ctx.log("error", "matrix connector stopped", {
            account: this.accountId,
            reason: error.message,
          });
          return this.report(ctx, { state: "fatal", lastError: error.message });
        }
        const wait = Math.max(
          error instanceof MatrixHttpError ? (error.retryAfterMs ?? 0) : 0,
          backoff.nextDelayMs(),
        );
        ctx.log("warn", "matrix sync interrupted", {
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

  private async syncLoop(
    ctx: ConnectorContext,
    client: MatrixClient,
    backoff: ReconnectBackoff,
    signal: AbortSignal,
  ): Promise<void> {
    const who = await client.call<{ user_id?: unknown }>("GET", "/account/whoami", { signal });
    if (typeof who.user_id !== "string") throw new Error("whoami answered without user_id");
    const self = who.user_id;
    const configured = this.account.settings.userId;
    if (typeof configured === "string" && configured !== self)
      throw new FatalError(`the access token belongs to ${self}, not to userId ${configured}`);
    this.direct = directRooms(await this.accountData(client, self, "m.direct", signal));
    let since = await ctx.state.get(SINCE_KEY);
    const pollMs = this.options.pollTimeoutMs ?? 30_000;
    let first = true;
    while (!signal.aborted) {
      const initial = since === undefined;
      const limit = initial ? Number(this.account.settings.initialSyncLimit ?? 0) : TIMELINE_LIMIT;
      const filter = JSON.stringify({
        room: { timeline: { limit } },
        presence: { not_types: ["*"] },
      });
      const query = new URLSearchParams({
        ...(since !== undefined ? { since } : {}),
        timeout: String(initial ? 0 : pollMs),
        filter,
      });
      const answer = await client.call<SyncAnswer>("GET", `/sync?${query}`, {
        signal,
        timeoutMs: pollMs + 15_000,
      });
      if (typeof answer.next_batch !== "string")
        throw new Error("/sync answered without next_batch");
      if (first) {
        first = false;
        backoff.connected();
        this.report(ctx, { state: "ready", lastError: undefined });
      }
      for (const item of answer.account_data?.events ?? [])
        if (item.type === "m.direct") this.direct = directRooms(item.content);
      await this.invites(ctx, client, self, answer.rooms?.invite ?? {}, signal);
      const events = await this.forwarded(ctx, client, self, answer, initial, signal);
      if (events.length) await ctx.submit(events);
      // Only now, with every event of the batch stored by the Worker, does the token move.
      since = answer.next_batch;
      await ctx.state.put(SINCE_KEY, since);
      if (events.length) this.report(ctx, { state: "ready", lastEventAt: Date.now() });
    }
  }

  /** The room events of one sync answer the Worker parses, in timeline order per room. */
  private async forwarded(
    ctx: ConnectorContext,
    client: MatrixClient,
    self: string,
    answer: SyncAnswer,
    initial: boolean,
    signal: AbortSignal,
  ): Promise<RawEvent[]> {
    const events: RawEvent[] = [];
    for (const [roomId, room] of Object.entries(answer.rooms?.join ?? {})) {
      if (room.timeline?.limited && !initial)
        ctx.log("warn", "matrix sync skipped older events of a busy room (a limited timeline)", {
          account: this.accountId,
          roomId,
        });
      for (const raw of room.timeline?.events ?? []) {
        const event = raw as TimelineEvent;
        if (typeof event.event_id !== "string" || typeof event.sender !== "string") continue;
        if (event.sender === self) {
          this.remember(event.event_id);
          continue;
        }
        if (event.type === "m.room.encrypted") {
          if (!this.warnedEncrypted.has(roomId)) {
            this.warnedEncrypted.add(roomId);
            ctx.log(
              "warn",
              "an end-to-end encrypted Matrix room: its events are skipped (only unencrypted rooms are served)",
              {
                account: this.accountId,
                roomId,
              },
            );
          }
          continue;
        }
        if (event.type !== "m.room.message" && event.type !== "m.reaction") continue;
        const target = event.content?.["m.relates_to"]?.event_id;
        const targetSender =
          event.type === "m.reaction" && typeof target === "string"
            ? await this.senderOf(client, self, roomId, target, signal)
            : undefined;
        events.push({
          eventId: event.event_id,
          payload: {
            roomId,
            event: raw,
            self: { userId: self },
            direct: this.direct.has(roomId),
            ...(targetSender ? { targetSender } : {}),
          },
        });
      }
    }
    return events;
  }

  private async invites(
    ctx: ConnectorContext,
    client: MatrixClient,
    self: string,
    invites: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<void> {
    const policy: InvitePolicy = {
      autoJoin: (this.account.settings.autoJoin as InvitePolicy["autoJoin"]) ?? "off",
      autoJoinAllowlist: (this.account.settings.autoJoinAllowlist as string[] | undefined) ?? [],
    };
    for (const [roomId, invite] of Object.entries(invites)) {
      const facts = inviteFacts(invite, self);
      const decision = await decideInvite(roomId, policy, client, signal);
      if (!decision.join) {
        ctx.log("info", "matrix invite left pending", {
          account: this.accountId,
          roomId,
          inviter: facts.inviter,
          reason: decision.reason,
        });
        continue;
      }
      try {
        await client.call("POST", `/join/${encodeURIComponent(roomId)}`, { signal, body: {} });
      } catch (error) {
        // A refusal (the invite was withdrawn, the room is gone) is final; the homeserver away is retried.
        if (!(error instanceof MatrixHttpError && error.status >= 400 && error.status < 500))
          throw error;
        ctx.log("warn", "matrix invite could not be joined", {
          account: this.accountId,
          roomId,
          reason: error.message,
        });
        continue;
      }
      ctx.log("info", "matrix invite joined", {
        account: this.accountId,
        roomId,
        inviter: facts.inviter,
      });
      if (facts.isDirect && facts.inviter)
        await this.markDirect(client, self, roomId, facts.inviter, signal);
    }
  }

  /** Adds a joined DM to the bot's m.direct, so it is still known as one after a restart. */
  private async markDirect(
    client: MatrixClient,
    self: string,
    roomId: string,
    userId: string,
    signal: AbortSignal,
  ): Promise<void> {
    const current = (await this.accountData(client, self, "m.direct", signal)) ?? {};
    const rooms = Array.isArray(current[userId]) ? (current[userId] as unknown[]) : [];
    if (!rooms.includes(roomId)) {
      const next = { ...current, [userId]: [...rooms, roomId] };
      await client.call("PUT", `/user/${encodeURIComponent(self)}/account_data/m.direct`, {
        signal,
        body: next,
      });
      this.direct = directRooms(next);
    }
  }

  private async accountData(
    client: MatrixClient,
    self: string,
    type: string,
    signal: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    try {
      return await client.call<Record<string, unknown>>(
        "GET",
        `/user/${encodeURIComponent(self)}/account_data/${encodeURIComponent(type)}`,
        { signal },
      );
    } catch (error) {
      if (error instanceof MatrixHttpError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Who sent `eventId` (a reaction's target): the bot's own recent events from memory, else one GET. */
  private async senderOf(
    client: MatrixClient,
    self: string,
    roomId: string,
    eventId: string,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (this.ownEvents.has(eventId)) return self;
    try {
      const event = await client.call<{ sender?: unknown }>(
        "GET",
        `/rooms/${encodeURIComponent(roomId)}/event/${encodeURIComponent(eventId)}`,
        { signal },
      );
      return typeof event.sender === "string" ? event.sender : undefined;
    } catch (error) {
      if (error instanceof MatrixHttpError && error.status < 500) return undefined;
      throw error;
    }
  }

  private remember(eventId: string): void {
    this.ownEvents.add(eventId);
    if (this.ownEvents.size > OWN_EVENTS_KEPT)
      this.ownEvents.delete(this.ownEvents.values().next().value as string);
  }

  private report(ctx: ConnectorContext, next: ConnectorStatus): void {
    this.status = { ...this.status, ...next };
    ctx.setStatus(this.status);
  }
}

/** m.direct content (user id → room ids) as room id → user id. */
function directRooms(content: unknown): Map<string, string> {
  const rooms = new Map<string, string>();
  if (typeof content !== "object" || content === null) return rooms;
  for (const [userId, list] of Object.entries(content as Record<string, unknown>))
    for (const roomId of Array.isArray(list) ? list : [])
      if (typeof roomId === "string") rooms.set(roomId, userId);
  return rooms;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
