import type { ConnectorContext, RawEvent } from "../../../../companion/src/connector.ts";
import type { MattermostRest } from "./rest.ts";

/**
 * Gap repair after a reconnect. Mattermost's WebSocket does not replay what was sent while nobody
 * listened (unless it could resume the same connection), so the connector remembers, per channel it
 * saw a post in, the channel's type and the newest post's `create_at`, durably (ctx.state, fenced by
 * the lease). After a reconnect that did not resume, `GET /channels/{id}/posts?since=` returns what
 * was posted meanwhile; each missed post is forwarded as the `posted` event it would have been.
 * What this cannot recover: edits and reactions made while disconnected, and posts in channels
 * the bot had not seen a post in before (a first DM sent during the gap).
 */

const STATE_KEY = "cursors";
/** Channels remembered (the most recently active); older ones fall out. */
export const MAX_TRACKED_CHANNELS = 100;
/** Missed posts forwarded per channel and repair, oldest first. */
export const MAX_REPAIR_POSTS_PER_CHANNEL = 200;

type Cursor = { type: string; createAt: number };

export class ChannelCursors {
  private cursors = new Map<string, Cursor>();
  private dirty = false;
  private flushing: Promise<void> | undefined;

  constructor(private readonly ctx: ConnectorContext) {}

  async load(): Promise<void> {
    const stored = await this.ctx.state.get(STATE_KEY);
    if (!stored) return;
    try {
      const parsed = JSON.parse(stored) as Record<string, [string, number]>;
      for (const [id, [type, createAt]] of Object.entries(parsed))
        if (typeof type === "string" && typeof createAt === "number")
          this.cursors.set(id, { type, createAt });
    } catch {
      this.ctx.log("warn", "mattermost cursors unreadable; starting without gap repair");
    }
  }

  typeOf(channelId: string): string | undefined {
    return this.cursors.get(channelId)?.type;
  }

  /** A post the Worker stored: its channel's cursor moves forward (never back). */
  advance(channelId: string, type: string, createAt: number): void {
    const current = this.cursors.get(channelId);
    if (current && current.createAt >= createAt && current.type === type) return;
    this.cursors.delete(channelId); // re-insert: Map order = recency
    this.cursors.set(channelId, { type, createAt: Math.max(createAt, current?.createAt ?? 0) });
    while (this.cursors.size > MAX_TRACKED_CHANNELS)
      this.cursors.delete(this.cursors.keys().next().value!);
    this.dirty = true;
  }

  /** Writes the cursors if they changed (one state write, not one per post). */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (!this.dirty) return;
    this.dirty = false;
    const value = JSON.stringify(
      Object.fromEntries(
        [...this.cursors].map(([id, cursor]) => [id, [cursor.type, cursor.createAt]]),
      ),
    );
    this.flushing = this.ctx.state.put(STATE_KEY, value).catch((error: unknown) => {
      this.dirty = true;
      this.ctx.log("warn", "mattermost cursors not saved", {
        reason: error instanceof Error ? error.message : String(error),
      });
    });
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  /** The posts missed in every tracked channel, as `posted` events, oldest first per channel. */
  async missedPosts(
    rest: MattermostRest,
    selfUserId: string,
    signal: AbortSignal,
  ): Promise<RawEvent[]> {
    const events: RawEvent[] = [];
    for (const [channelId, cursor] of this.cursors) {
      const page = await rest.get<{ posts?: Record<string, MissedPost> }>(
        `/channels/${encodeURIComponent(channelId)}/posts?since=${cursor.createAt}`,
        signal,
      );
      const missed = Object.values(page.posts ?? {})
        .filter(
          (post) =>
            post.create_at > cursor.createAt &&
            post.user_id !== selfUserId &&
            !post.delete_at &&
            !post.type,
        )
        .sort((a, b) => a.create_at - b.create_at)
        .slice(0, MAX_REPAIR_POSTS_PER_CHANNEL);
      for (const post of missed) {
        events.push({
          eventId: `posted:${post.id}`,
          payload: {
            event: "posted",
            data: { channel_type: cursor.type, post: JSON.stringify(post) },
            broadcast: { channel_id: channelId },
          },
        });
      }
    }
    return events;
  }
}

interface MissedPost {
  id: string;
  create_at: number;
  delete_at?: number;
  user_id: string;
  type?: string;
}
