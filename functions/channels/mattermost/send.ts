import type { MattermostAccount } from "./config.ts";
import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { commitPreview, retractPreview } from "../preview-stream.ts";
import {
  mattermostApi,
  mattermostBot,
  type MattermostCall,
  type MattermostPostRecord,
} from "./api.ts";
import { findRunPreview } from "./progress.ts";

/**
 * One reply chunk out to Mattermost: `POST /api/v4/posts` in the route's channel, in its thread
 * (`root_id`) when the conversation is one — once a thread root exists every chunk stays in it.
 *
 * Idempotency: the post carries `pending_post_id` = the chunk's post key (postKey). Mattermost drops a
 * repeat with the same pending_post_id, but only while the id sits in a 30-second, per-node cache
 * (server app/post.go `deduplicateCreatePost`), so it narrows the window without closing it. The
 * key is also written into the post's `props` (`edgeclaw_outbox_id`), which are stored with the
 * post: `reconcile` looks for it in the channel's posts since the chunk was queued, so an outcome lost
 * to a timeout is settled by looking, not by sending again.
 *
 * The outbox chunk id alone is unique only within its session (a notice is `notice:<seq>:0`, and
 * every session counts from 1), while Mattermost's cache is one per server for all the bot's posts:
 * two sessions' first notices within 30 s would have the second answered with the first's post and
 * never shown. So the key also names the account, the channel and the thread the chunk goes to.
 *
 * The first chunk of a run that left a live preview (`progressState.previewPostId`, or one found by
 * its run id when its post's answer was lost) patches that post into the answer; `retract` removes
 * the preview and posts nothing.
 */
export const OUTBOX_PROP = "edgeclaw_outbox_id";

export async function sendMattermostMessage(
  message: OutboundMessage,
  ctx: SendContext<MattermostAccount>,
): Promise<SendResult> {
  const bot = mattermostBot(ctx);
  if ("missing" in bot) return { ok: false, retryable: false, error: bot.missing };
  const state = { ...(message.progressState ?? {}) };
  if (
    !state.previewPostId &&
    state.previewPendingAt &&
    (message.retract || message.chunkIndex === 0)
  ) {
    // The run's preview post lost its answer: find it, so the answer takes it over (or the retract removes it).
    const found = await findRunPreview(
      bot,
      message.route,
      message.runId,
      Number(state.previewPendingAt),
    );
    if (found === "unknown")
      return { ok: false, retryable: true, error: "could not look for the run's preview post" };
    if (found) state.previewPostId = found;
  }

  if (message.retract) {
    return retractPreview([state.previewPostId], async (id) => {
      const removed = await mattermostApi(bot, "DELETE", `/posts/${encodeURIComponent(id)}`);
      return removed.ok || (removed.kind === "refused" && removed.status === 404)
        ? { ok: true }
        : failure(removed);
    });
  }

  return commitPreview({
    previewId: message.chunkIndex === 0 ? state.previewPostId : undefined,
    edit: async (previewId) => {
      const patched = await mattermostApi<MattermostPostRecord>(
        bot,
        "PUT",
        `/posts/${encodeURIComponent(previewId)}/patch`,
        { message: message.text },
      );
      if (patched.ok) return { ok: true };
      if (patched.kind === "lost" || patched.status === 429 || patched.status >= 500)
        return failure(patched);
      return "gone"; // deleted mid-run or refused for good: post the answer as a new post.
    },
    post: async () => {
      const posted = await mattermostApi<MattermostPostRecord>(bot, "POST", "/posts", {
        channel_id: message.route.to,
        message: message.text,
        ...(message.route.threadId ? { root_id: message.route.threadId } : {}),
        pending_post_id: await postKey(message),
        props: { [OUTBOX_PROP]: await postKey(message) },
      });
      return posted.ok ? { ok: true, platformMessageId: posted.value.id } : failure(posted);
    },
  });
}

/** Mattermost refuses a pending_post_id over 190 characters. */
const MAX_PENDING_POST_ID = 190;

/** One chunk's key on the server, stable across retries: account, channel, thread and outbox id (hashed when too long). */
export async function postKey(message: OutboundMessage): Promise<string> {
  const key = `${message.route.accountId}:${message.route.to}:${message.route.threadId ?? "-"}:${message.id}`;
  if (key.length <= MAX_PENDING_POST_ID) return key;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)),
  );
  return `sha256:${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Did a lost attempt land? The channel's posts since the chunk was queued, looked up by the chunk id in their props. */
export async function reconcileMattermostMessage(
  message: OutboundMessage,
  ctx: SendContext<MattermostAccount>,
): Promise<ReconcileResult> {
  if (message.retract)
    return { outcome: "untraceable", reason: "a retract only deletes", idempotent: true };
  if (message.chunkIndex === 0 && message.progressState?.previewPostId) {
    return {
      outcome: "untraceable",
      reason: "the answer patches the run's preview; patching again is harmless",
      idempotent: true,
    };
  }
  const bot = mattermostBot(ctx);
  if ("missing" in bot) throw new Error(bot.missing);
  // A minute of slack for clock skew between the Worker and the Mattermost server.
  const since = Math.max(0, (message.queuedAt ?? Date.now() - 24 * 3600_000) - 60_000);
  const found = await mattermostApi<{
    order?: string[];
    posts?: Record<string, MattermostPostRecord>;
  }>(bot, "GET", `/channels/${encodeURIComponent(message.route.to)}/posts?since=${since}`);
  if (!found.ok) throw new Error(found.kind === "lost" ? found.error : found.message);
  const key = await postKey(message);
  const match = Object.values(found.value.posts ?? {}).find(
    (post) => post.props?.[OUTBOX_PROP] === key,
  );
  return match ? { outcome: "landed", platformMessageId: match.id } : { outcome: "missing" };
}

/**
 * A failed call in the outbox's vocabulary: 429 waits Retry-After; 5xx is retried (including
 * Mattermost's "pending" answer to a repeat whose first attempt is still saving); other 4xx are
 * final; a lost answer is reconciled, never repeated blindly.
 */
export function failure(
  call: Extract<MattermostCall<unknown>, { ok: false }>,
): Extract<SendResult, { ok: false }> {
  if (call.kind === "lost") return { ok: false, outcomeUnknown: true, error: call.error };
  if (call.status === 429)
    return {
      ok: false,
      retryable: true,
      retryAfterMs: call.retryAfterMs ?? 1000,
      error: call.message,
    };
  return { ok: false, retryable: call.status >= 500, error: call.message };
}
