import type { MattermostAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { streamPreview, trackedKeys, type PreviewPlatform } from "../preview-stream.ts";
import {
  mattermostApi,
  mattermostBot,
  type MattermostBot,
  type MattermostPostRecord,
} from "./api.ts";

/**
 * Live feedback while the agent works (channels/mattermost "preview streaming"), best effort:
 * - typing (`POST /users/{bot}/typing`, shown a few seconds) when the run starts, renewed while it works;
 * - `streaming.mode` partial (the default) / block: the answer so far goes into one preview post,
 *   edited in place (`PUT /posts/{id}/patch`, at most once a second; block mode at paragraph ends);
 *   the final send patches it into the answer, so the channel shows one post, not a trail.
 * - progress / off: typing only; the answer is posted when it is ready.
 *
 * A pending mark is checkpointed before the preview is posted, and the post carries the run id in
 * its props. If the post's answer is lost, the channel is searched for it (`findRunPreview`) before
 * anything else is posted: found, it is the preview; not found, nothing landed and previewing
 * goes on; the search failing stops previewing (`previewBroken`) rather than risk a second preview.
 */
export const PREVIEW_PROP = "edgeclaw_preview_run";

const PREVIEW_EDIT_INTERVAL_MS = 1000;
const TYPING_RENEW_MS = 4000;
const PREVIEW_KEYS = trackedKeys("preview", "previewPostId");

export async function mattermostProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<MattermostAccount>,
): Promise<ProgressState> {
  const bot = mattermostBot(ctx);
  if ("missing" in bot) return state;
  const mode = bot.account.streaming.mode;
  const next: ProgressState = { ...state };
  const now = Date.now();
  const warn = (what: string, detail: string) =>
    console.warn(`mattermost progress ${what} failed`, detail.slice(0, 200));

  const typing = async () => {
    const user = encodeURIComponent(route.extra?.botUserId ?? "me");
    const sent = await mattermostApi(bot, "POST", `/users/${user}/typing`, {
      channel_id: route.to,
      ...(route.threadId ? { parent_id: route.threadId } : {}),
    });
    if (sent.ok) next.typingAt = String(now);
    else warn("typing", sent.kind === "lost" ? sent.error : sent.message);
  };
  const renewTyping = async () => {
    if (now - Number(next.typingAt ?? 0) >= TYPING_RENEW_MS) await typing();
  };

  switch (event.type) {
    case "accepted":
    case "run-finished":
      return next;
    case "run-started":
      await typing();
      return next;
    case "tool":
      await renewTyping();
      return next;
    case "text-delta": {
      await renewTyping();
      if (mode !== "partial" && mode !== "block") return next;
      const preview: PreviewPlatform<string> = {
        // The preview shows what the first chunk will hold; the final send replaces it exactly.
        render: (shown) => shown || "…",
        post: async (message) => {
          const posted = await mattermostApi<MattermostPostRecord>(bot, "POST", "/posts", {
            channel_id: route.to,
            message,
            ...(route.threadId ? { root_id: route.threadId } : {}),
            props: { [PREVIEW_PROP]: ctx.runId ?? "" },
          });
          if (posted.ok) return { ok: true, id: posted.value.id };
          warn("preview post", posted.kind === "lost" ? posted.error : posted.message);
          return { ok: false, landed: posted.kind === "refused" ? "no" : "maybe" };
        },
        edit: async (id, message) => {
          const patched = await mattermostApi(
            bot,
            "PUT",
            `/posts/${encodeURIComponent(id)}/patch`,
            { message },
          );
          if (!patched.ok)
            warn("preview edit", patched.kind === "lost" ? patched.error : patched.message);
          return patched.ok;
        },
        // A post whose answer was lost may be in the channel: found, it is the preview; never posted twice blind.
        recover: (pendingSince) => findRunPreview(bot, route, ctx.runId, pendingSince),
      };
      const limits = {
        editIntervalMs: PREVIEW_EDIT_INTERVAL_MS,
        maxChars: bot.account.textChunkLimit,
        overflow: "cut" as const,
        block: mode === "block",
      };
      return streamPreview(next, event.soFar, preview, limits, PREVIEW_KEYS, ctx, now);
    }
  }
}

/**
 * The preview post of run `runId` in the route's channel, posted since `pendingSince` (less a minute
 * of clock skew): its id, undefined when there is none, "unknown" when the lookup failed.
 */
export async function findRunPreview(
  bot: MattermostBot,
  route: ReplyRoute,
  runId: string | undefined,
  pendingSince: number,
): Promise<string | undefined | "unknown"> {
  if (!runId) return "unknown";
  const since = Math.max(0, pendingSince - 60_000);
  const found = await mattermostApi<{ posts?: Record<string, MattermostPostRecord> }>(
    bot,
    "GET",
    `/channels/${encodeURIComponent(route.to)}/posts?since=${since}`,
  );
  if (!found.ok) return "unknown";
  return Object.values(found.value.posts ?? {}).find(
    (post) => post.props?.[PREVIEW_PROP] === runId && !(post as { delete_at?: number }).delete_at,
  )?.id;
}
