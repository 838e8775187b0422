import type { FeishuAccount } from "./config.ts";
import type { OutboundMessage, SendContext, SendResult } from "../adapter.ts";
import { answerCard } from "./card.ts";
import { commitCard, retractCard } from "./card-reply.ts";
import { markdownToFeishuPost } from "./format.ts";
import { feishuSendUuid, feishuTarget, postFeishuMessage } from "./messages.ts";

/**
 * One reply chunk out to Feishu as a rich-text post (an interactive card with `renderMode: "card"`).
 * Never retries on its own (the outbox does).
 *
 * - The first chunk of a run that streamed into a card (progress.ts) becomes that card's final text
 *   and ends its streaming (card-reply.ts): the answer is one message, not a card and a post.
 * - The first chunk answers the user's message through the reply API
 *   (POST open-apis/im/v1/messages/{message_id}/reply), in its topic thread when the message was in
 *   one or `replyInThread` is "enabled" (`reply_in_thread`); later chunks of a threaded reply follow
 *   the same way, the others go to the chat (POST open-apis/im/v1/messages?receive_id_type=chat_id).
 * - Every send carries `uuid`, derived from the outbox chunk id: Feishu sends a message only once
 *   per uuid within an hour, so a send that got no answer is repeated safely (`idempotentSends`).
 */
export async function sendFeishuMessage(
  message: OutboundMessage,
  ctx: SendContext<FeishuAccount>,
): Promise<SendResult> {
  const target = feishuTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.feishu is not configured" };
  if (!target.credentials)
    return {
      ok: false,
      retryable: false,
      error: `no Feishu appId/appSecret for account ${message.route.accountId}`,
    };
  const withCredentials = { account: target.account, credentials: target.credentials };
  const state = message.progressState ?? {};
  if (message.retract) return retractCard(withCredentials, message, ctx.signal);
  const text = message.text.trim();
  if (!text) return { ok: true };
  if (message.chunkIndex === 0 && state.cardId) {
    const committed = await commitCard(withCredentials, message, text, ctx.signal);
    if (committed !== "refused") return committed;
    // The card cannot take the answer (deleted, expired): post it as a message instead.
  }
  const uuid = await feishuSendUuid(message.route.accountId, message.route.to, message.id);
  const body =
    target.account.renderMode === "card"
      ? { msg_type: "interactive", content: JSON.stringify(answerCard(text, false)) }
      : { msg_type: "post", content: markdownToFeishuPost(text) };
  return postFeishuMessage(
    withCredentials,
    message.route,
    message.chunkIndex,
    body,
    uuid,
    ctx.signal,
  );
}
