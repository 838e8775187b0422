/**
 * The outbox event id of a Mattermost WebSocket event, and the lenient JSON read its nested
 * payloads need. Apart from the connector (connector.ts) because the id is the Worker's dedup key:
 * it must come out the same for a live event and for the same post repaired from REST later.
 */

/** Stable across redeliveries and repairs: the post id for posts, the post id + edit time for edits, the reaction's identity. */
export function eventIdOf(
  frame: Record<string, unknown>,
  post: { id?: unknown } | undefined,
  data: Record<string, unknown>,
): string {
  const event = String(frame.event);
  if (post && typeof post.id === "string") {
    const edit =
      event === "post_edited" ? `:${String((post as { edit_at?: unknown }).edit_at ?? "")}` : "";
    return `${event}:${post.id}${edit}`;
  }
  const reaction =
    typeof data.reaction === "string"
      ? (safeJson(data.reaction) as
          | { post_id?: unknown; user_id?: unknown; emoji_name?: unknown; create_at?: unknown }
          | undefined)
      : undefined;
  if (reaction)
    return `${event}:${String(reaction.post_id)}:${String(reaction.user_id)}:${String(reaction.emoji_name)}:${String(reaction.create_at)}`;
  return `${event}:seq:${String(frame.seq)}`;
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
