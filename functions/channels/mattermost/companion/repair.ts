import type { ConnectorContext, RawEvent } from "../../../../companion/src/connector.ts";
import type { ChannelFactsCache } from "./channel-facts.ts";
import type { ChannelCursors } from "./cursors.ts";
import { safeJson } from "./event-id.ts";
import type { MattermostRest } from "./rest.ts";

/**
 * The repair after a gap: posts the Mattermost connector missed (a jump in the socket's sequence, a
 * reconnect the server could not resume) read from REST from each channel's cursor and forwarded
 * like live ones, in order, each cursor moving once its post is stored. Apart from the connector
 * (connector.ts), which owns the socket, because this path never touches it: REST in, outbox out.
 */

/** Who the bot is (`GET /users/me`), sent with every event so the Worker can tell its own posts. */
export interface Self {
  userId: string;
  username: string;
}

/** Posts missed while disconnected, forwarded like live ones (deduplicated by post id in the Worker). */
export async function forwardMissedPosts(
  ctx: ConnectorContext,
  {
    accountId,
    rest,
    self,
    cursors,
    facts,
    signal,
  }: {
    accountId: string;
    rest: MattermostRest;
    self: Self;
    cursors: ChannelCursors;
    facts: ChannelFactsCache;
    signal: AbortSignal;
  },
): Promise<void> {
  const missed = await cursors.missedPosts(rest, self.userId, signal);
  if (missed.length)
    ctx.log("info", "mattermost: forwarding posts missed while disconnected", {
      account: accountId,
      count: missed.length,
    });
  for (const event of missed) {
    const frame = event.payload as Record<string, unknown>;
    const post = safeJson(String(((frame.data ?? {}) as Record<string, unknown>).post)) as {
      channel_id: string;
      create_at: number;
    };
    // A repaired post comes from REST, which does not name the team: the one learnt, if any.
    const teamId = facts.get(post.channel_id)?.teamId;
    await ctx.submit([
      {
        eventId: event.eventId,
        payload: { event: frame, self, ...(teamId ? { teamId } : {}) },
      } satisfies RawEvent,
    ]);
    cursors.advance(
      post.channel_id,
      String(((frame.data ?? {}) as Record<string, unknown>).channel_type),
      post.create_at,
    );
  }
  await cursors.flush();
}
