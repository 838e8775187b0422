import { randomBytes } from "node:crypto";
import { FAKE_MATRIX_BOT, FAKE_MATRIX_SERVER } from "./matrix-identity.ts";

/**
 * The state of the fake homeserver (matrix-homeserver.ts serves it over the client-server API): the
 * rooms, the bot's memberships and invites, its account data, and one stream of positions that
 * `/sync` reads from — every timeline event, invite and account-data change gets the next position,
 * and `next_batch` is `s<position>`. Only the bot's view is kept (one bot user per token).
 */

export interface FakeMatrixEvent {
  event_id: string;
  type: string;
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  /** For state events (m.room.member, m.room.encryption). */
  state_key?: string;
  room_id?: string;
  unsigned?: Record<string, unknown>;
}

export interface FakeMatrixRoom {
  roomId: string;
  alias?: string;
  encrypted: boolean;
  /** Anyone may join (a public room); otherwise only with an invite. */
  public: boolean;
  timeline: FakeMatrixEvent[];
}

type StreamEntry =
  | { pos: number; kind: "timeline"; roomId: string; event: FakeMatrixEvent }
  | { pos: number; kind: "invite"; roomId: string; inviter: string; isDirect: boolean }
  | { pos: number; kind: "account_data"; type: string };

export class FakeMatrixWorld {
  readonly rooms = new Map<string, FakeMatrixRoom>();
  readonly joined = new Set<string>();
  readonly invites = new Map<string, { inviter: string; isDirect: boolean }>();
  readonly accountData = new Map<string, Record<string, unknown>>();
  /** txnId (per token) → the event it made: a repeated PUT answers the same event. */
  readonly transactions = new Map<string, string>();
  private readonly stream: StreamEntry[] = [];
  private position = 0;
  private readonly waiters = new Set<() => void>();
  private clock = Date.now();

  get head(): number {
    return this.position;
  }

  now(): number {
    this.clock = Math.max(this.clock + 1, Date.now());
    return this.clock;
  }

  newEventId(): string {
    return `$${randomBytes(12).toString("base64url")}`;
  }

  room(roomId: string, fields: Partial<Omit<FakeMatrixRoom, "roomId" | "timeline">> = {}) {
    let room = this.rooms.get(roomId);
    if (!room) {
      room = { roomId, encrypted: false, public: false, timeline: [], ...fields };
      this.rooms.set(roomId, room);
    } else Object.assign(room, fields);
    return room;
  }

  roomByAlias(alias: string): FakeMatrixRoom | undefined {
    return [...this.rooms.values()].find((room) => room.alias === alias);
  }

  /** Appends an event to a room's timeline and the sync stream. */
  append(roomId: string, event: Omit<FakeMatrixEvent, "event_id" | "origin_server_ts">) {
    const room = this.room(roomId);
    const full: FakeMatrixEvent = {
      event_id: this.newEventId(),
      origin_server_ts: this.now(),
      ...event,
    };
    room.timeline.push(full);
    this.push({ kind: "timeline", roomId, event: full });
    return full;
  }

  invite(roomId: string, inviter: string, isDirect: boolean): void {
    this.room(roomId);
    this.invites.set(roomId, { inviter, isDirect });
    this.push({ kind: "invite", roomId, inviter, isDirect });
  }

  /** The bot joins (an invite or a public room), as its m.room.member event in the timeline. */
  join(roomId: string): boolean {
    const room = this.rooms.get(roomId);
    if (!room || (!room.public && !this.invites.has(roomId) && !this.joined.has(roomId)))
      return false;
    if (this.joined.has(roomId)) return true;
    this.invites.delete(roomId);
    this.joined.add(roomId);
    this.append(roomId, {
      type: "m.room.member",
      sender: FAKE_MATRIX_BOT.userId,
      state_key: FAKE_MATRIX_BOT.userId,
      content: { membership: "join" },
    });
    return true;
  }

  setAccountData(type: string, content: Record<string, unknown>): void {
    this.accountData.set(type, content);
    this.push({ kind: "account_data", type });
  }

  /**
   * One sync answer: everything after `since` (nothing before the bot joined a room), or, with no
   * `since`, the current state with each joined room's last `limit` timeline events.
   */
  sync(since: number | undefined, limit: number) {
    const join: Record<string, { timeline: { events: FakeMatrixEvent[]; limited: boolean } }> = {};
    const invite: Record<string, { invite_state: { events: FakeMatrixEvent[] } }> = {};
    const accountTypes = new Set<string>();
    const addTimeline = (roomId: string, events: FakeMatrixEvent[], limited: boolean) => {
      const entry = (join[roomId] ??= { timeline: { events: [], limited: false } });
      entry.timeline.events.push(...events);
      entry.timeline.limited ||= limited;
    };
    if (since === undefined) {
      for (const roomId of this.joined) {
        const timeline = this.rooms.get(roomId)?.timeline ?? [];
        addTimeline(roomId, limit ? timeline.slice(-limit) : [], timeline.length > limit);
      }
      for (const [roomId, pending] of this.invites)
        invite[roomId] = this.inviteState(roomId, pending.inviter, pending.isDirect);
      for (const type of this.accountData.keys()) accountTypes.add(type);
    } else {
      for (const entry of this.stream) {
        if (entry.pos <= since) continue;
        if (entry.kind === "timeline" && this.joined.has(entry.roomId))
          addTimeline(entry.roomId, [entry.event], false);
        else if (entry.kind === "invite" && this.invites.has(entry.roomId))
          invite[entry.roomId] = this.inviteState(entry.roomId, entry.inviter, entry.isDirect);
        else if (entry.kind === "account_data") accountTypes.add(entry.type);
      }
    }
    return {
      next_batch: `s${this.position}`,
      rooms: { join, invite, leave: {} },
      account_data: {
        events: [...accountTypes].map((type) => ({ type, content: this.accountData.get(type) })),
      },
    };
  }

  /** Resolves when the stream moves past `since`, or after `ms`. */
  waitPast(since: number, ms: number): Promise<void> {
    if (this.position > since || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Wakes every waiting /sync (a stop). */
  wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private inviteState(roomId: string, inviter: string, isDirect: boolean) {
    const room = this.rooms.get(roomId);
    const events: FakeMatrixEvent[] = [
      {
        event_id: this.newEventId(),
        type: "m.room.member",
        sender: inviter,
        state_key: FAKE_MATRIX_BOT.userId,
        origin_server_ts: this.now(),
        content: { membership: "invite", ...(isDirect ? { is_direct: true } : {}) },
      },
    ];
    if (room?.alias)
      events.push({
        event_id: this.newEventId(),
        type: "m.room.canonical_alias",
        sender: inviter,
        state_key: "",
        origin_server_ts: this.now(),
        content: { alias: room.alias },
      });
    return { invite_state: { events } };
  }

  private push(entry: Omit<StreamEntry, "pos"> & Record<string, unknown>): void {
    this.position += 1;
    this.stream.push({ ...entry, pos: this.position } as StreamEntry);
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** A room id on the fake's server: `!<name>:fake.test`. */
export function fakeRoomId(name: string): string {
  return `!${name}:${FAKE_MATRIX_SERVER}`;
}
