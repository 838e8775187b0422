import type { WebClient } from "@slack/web-api";

/**
 * Finds messages this app posted (by their metadata marker, or as the bot's untagged native stream)
 * in a conversation's history (or one thread's replies) since a point in time. Used to learn whether a post whose answer was lost
 * landed (outbox reconcile) and to find a preview posted just before a crash.
 *
 * Precise rather than "the last page": reads with `oldest` = the earliest moment the post can have
 * been made (less a clock-skew margin) and follows `next_cursor` until that bound, so a busy channel
 * with hundreds of messages since then is still searched to the end. The page count is bounded; past
 * it the lookup throws ("cannot tell"), which callers treat as "ask again later", never as "absent".
 */

/** Slack's clock and ours may differ a little; read this much further back. */
const CLOCK_SKEW_MS = 60_000;
const PAGE_SIZE = 200;
/** 50 pages × 200 = 10,000 messages since the attempt; more than that and we stop and say so. */
const MAX_PAGES = 50;

export interface TaggedMessage {
  ts: string;
  text?: string;
  /** Who posted it (our bot, for our own messages). */
  user?: string;
  botId?: string;
  /** `metadata.event_type`, when the message carries metadata. */
  eventType?: string;
  payload: Record<string, unknown>;
  /** The message's block ids (a file's share message is tagged there: send-file.ts). */
  blockIds: string[];
}

export interface LookupWhere {
  channel: string;
  /** Search this thread's replies instead of the channel's top-level history. */
  threadTs?: string;
  /** No message we look for can be older than this (ms since epoch). */
  sinceMs: number;
}

/** Slack `ts` for a time in ms, as the `oldest` bound. */
export function slackTsFromMs(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(6);
}

export async function findTaggedMessages(
  client: WebClient,
  where: LookupWhere,
  match: (message: TaggedMessage) => boolean,
  options: { firstOnly?: boolean } = {},
): Promise<TaggedMessage[]> {
  const found: TaggedMessage[] = [];
  const oldest = slackTsFromMs(where.sinceMs - CLOCK_SKEW_MS);
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const common = {
      channel: where.channel,
      oldest,
      include_all_metadata: true,
      limit: PAGE_SIZE,
      ...(cursor ? { cursor } : {}),
    };
    const result = where.threadTs
      ? await client.conversations.replies({ ...common, ts: where.threadTs })
      : await client.conversations.history(common);
    for (const message of result.messages ?? []) {
      const metadata = message.metadata as
        | { event_type?: unknown; event_payload?: unknown }
        | undefined;
      if (!message.ts) continue;
      const payload =
        metadata?.event_payload && typeof metadata.event_payload === "object"
          ? (metadata.event_payload as Record<string, unknown>)
          : {};
      const tagged: TaggedMessage = {
        ts: message.ts,
        text: message.text,
        user: message.user,
        botId: message.bot_id,
        eventType: typeof metadata?.event_type === "string" ? metadata.event_type : undefined,
        payload,
        blockIds: (message.blocks ?? []).flatMap((block) =>
          typeof block.block_id === "string" ? [block.block_id] : [],
        ),
      };
      if (!match(tagged)) continue;
      found.push(tagged);
      if (options.firstOnly) return found;
    }
    cursor = result.response_metadata?.next_cursor || undefined;
    if (!cursor) return found;
  }
  throw new Error(
    `more than ${MAX_PAGES * PAGE_SIZE} messages since the attempt in ${where.channel}; cannot tell`,
  );
}
