import type { MattermostAccount } from "./config.ts";
import type { SendContext } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { mattermostApi, mattermostBot, type MattermostPostRecord } from "./api.ts";

/**
 * Has the bot posted in this thread? (`implicitMentions.threadParticipation`, default on: a
 * follow-up in a thread the bot answered in needs no new @-mention.) One `GET /posts/{root}/thread`.
 */
export async function mattermostParticipatedInThread(
  route: ReplyRoute,
  ctx: SendContext<MattermostAccount>,
): Promise<boolean> {
  const bot = mattermostBot(ctx);
  const botUserId = route.extra?.botUserId;
  if (
    "missing" in bot ||
    !route.threadId ||
    !botUserId ||
    !bot.account.implicitMentions.threadParticipation
  )
    return false;
  const thread = await mattermostApi<{ posts?: Record<string, MattermostPostRecord> }>(
    bot,
    "GET",
    `/posts/${encodeURIComponent(route.threadId)}/thread`,
  );
  if (!thread.ok) throw new Error(thread.kind === "lost" ? thread.error : thread.message);
  return Object.values(thread.value.posts ?? {}).some((post) => post.user_id === botUserId);
}
