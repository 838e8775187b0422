import { HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import { recordAuditEvent } from "../audit.ts";
import { sessionLog } from "../log.ts";
import { enqueueReply, eventReplyId } from "./replies.ts";
import type { InboxRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * What a chat sender is told, once, when their event is set aside. The reason stays with the
 * operator (dead-letters API, audit): it is an internal error (a stack line, a database message)
 * that tells a chat user nothing and may tell an attacker something.
 */
export const DEAD_LETTER_NOTICE =
  "⚠️ Your message could not be processed and was set aside; the operator can see why. Later messages are handled normally.";

/** The notice for an event on `channel`: the operator's own surfaces (web chat, API) get the reason too. */
export function deadLetterNotice(channel: string, reason: string): string {
  if (!HTTP_CHANNELS.has(channel)) return DEAD_LETTER_NOTICE;
  return `⚠️ This message could not be processed and was set aside (${reason}). Later messages are handled normally.`;
}

/**
 * Ends events that cannot be processed (a permanent error, or a transient one past its bound):
 * each is settled with its reason, its sender is told once (a system event, which never posts by
 * itself, is set aside silently; so is an event whose sender access control has not admitted —
 * `tellSender: false`), and an audit row records it. The session goes on with the next.
 */
export function deadLetterEvents(
  s: SessionState,
  rows: InboxRow[],
  reason: string,
  options: { tellSender?: boolean } = {},
): void {
  const now = Date.now();
  const noticeFor = (row: InboxRow) => deadLetterNotice(row.event.envelope.route.channel, reason);
  s.ctx.storage.transactionSync(() => {
    for (const row of rows) {
      const silent = row.event.envelope.kind === "system" || options.tellSender === false;
      const route = row.event.envelope.route;
      if (!silent && !HTTP_CHANNELS.has(route.channel))
        enqueueReply(s, eventReplyId(s, "dead", row.seq), null, route, DEAD_LETTER_NOTICE, now);
      s.store.inbox.deadLetter(row.seq, reason, silent ? null : noticeFor(row), now);
    }
  });
  for (const row of rows)
    s.emit([row.seq], { type: "error", code: "dead_letter", message: noticeFor(row) });
  // Best effort, never awaited by the session: Postgres being down is often why we are here.
  void recordAuditEvent(s.env, "inbox.dead_letter", {
    sessionKey: s.store.meta.get("sessionKey"),
    seqs: rows.map((row) => row.seq),
    // The control page's channel status shows each channel's newest failure.
    channel: rows[0]?.event.envelope.channel,
    reason,
  }).catch((error: unknown) =>
    sessionLog(s, { seqs: rows.map((row) => row.seq) }).error("audit write failed", { error }),
  );
}
