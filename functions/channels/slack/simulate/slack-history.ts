import { compareTs } from "./slack-timestamps.ts";
import type { SlackFakeState } from "./slack-state.ts";

/**
 * conversations.history and conversations.replies as Slack serves them: `oldest`/`latest`/
 * `inclusive` bounds, `limit` (at most 999) and cursor pagination (`response_metadata.next_cursor`,
 * `has_more`); history newest first without thread replies, replies oldest first with the parent;
 * `metadata` only with `include_all_metadata`.
 */
export function readConversation(
  state: SlackFakeState,
  method: "conversations.history" | "conversations.replies",
  args: Record<string, unknown>,
): Record<string, unknown> {
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  const channel = str("channel");
  const thread = str("ts");
  if (method === "conversations.replies" && !thread)
    return { ok: false, error: "thread_not_found" };
  const inclusive = String(args.inclusive) === "true" || args.inclusive === "1";
  const oldest = str("oldest") ?? String(args.oldest ?? "0");
  const latest = str("latest") ?? (args.latest !== undefined ? String(args.latest) : undefined);
  const after = (ts: string) =>
    inclusive ? compareTs(ts, oldest) >= 0 : compareTs(ts, oldest) > 0;
  const before = (ts: string) =>
    latest === undefined || (inclusive ? compareTs(ts, latest) <= 0 : compareTs(ts, latest) < 0);
  const newestFirst = method === "conversations.history";
  const matching = state.messages
    .filter((m) => m.channel === channel && !m.deleted)
    .filter((m) =>
      method === "conversations.replies" ? m.thread_ts === thread || m.ts === thread : !m.thread_ts,
    )
    .filter((m) => after(m.ts) && before(m.ts))
    .sort((a, b) => compareTs(a.ts, b.ts) * (newestFirst ? -1 : 1));
  const limit = Math.min(999, Math.max(1, Number(args.limit ?? 100) || 100));
  const offset =
    typeof args.cursor === "string" && args.cursor
      ? Number(
          Buffer.from(args.cursor, "base64")
            .toString()
            .replace(/^offset:/, ""),
        )
      : 0;
  const page = matching.slice(offset, offset + limit).map((m) => ({
    type: "message",
    user: m.user,
    bot_id: m.bot_id,
    text: m.text,
    ts: m.ts,
    thread_ts: m.thread_ts,
    ...(m.blocks ? { blocks: m.blocks } : {}),
    ...(m.files ? { files: m.files } : {}),
    ...(String(args.include_all_metadata) === "true" && m.metadata ? { metadata: m.metadata } : {}),
  }));
  const more = offset + limit < matching.length;
  return {
    ok: true,
    messages: page,
    has_more: more,
    response_metadata: {
      next_cursor: more ? Buffer.from(`offset:${offset + limit}`).toString("base64") : "",
    },
  };
}
