import type { SlackAccount } from "./config.ts";
import type { SendContext } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { slackClient } from "./client.ts";
import { slackBotIdentity } from "./identity.ts";
import type { SlackBotIdentity } from "./parse-context.ts";
import { slackTarget } from "./route.ts";

/**
 * Has the bot posted in this thread? One `conversations.replies` call (the newest 200 replies), so
 * a follow-up in a thread the agent answered in is treated like a mention, as in OpenClaw.
 */
export async function slackParticipatedInThread(
  route: ReplyRoute,
  ctx: SendContext<SlackAccount>,
): Promise<boolean> {
  const target = slackTarget(ctx);
  if (!target?.botToken || !route.threadId) return false;
  // The ids the event's envelope named (parse.ts puts them on the route); auth.test only without them.
  const known = route.extra?.botUserId;
  const identity: SlackBotIdentity = known
    ? { userId: known }
    : await slackBotIdentity(target.botToken, target.account.apiBaseUrl);
  if (!identity.userId && !identity.botId) return false;
  const result = await slackClient(
    target.botToken,
    target.account.apiBaseUrl,
  ).conversations.replies({ channel: route.to, ts: route.threadId, limit: 200 });
  return (result.messages ?? []).some(
    (message) =>
      (identity.botId && message.bot_id === identity.botId) ||
      (identity.userId && message.user === identity.userId),
  );
}
