import type { FeishuAccount } from "./config.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { callFeishuApi } from "./api.ts";
import { streamIntoCard } from "./card-stream.ts";
import { feishuTarget } from "./messages.ts";

/**
 * Live feedback while the agent works on Feishu, all best effort (failures are logged, never thrown):
 *
 * - OpenClaw's typing indicator: a "Typing" reaction on the user's message while the agent works
 *   (POST open-apis/im/v1/messages/{id}/reactions), removed when the run ends (DELETE
 *   …/reactions/{reaction_id}). `typingIndicator: false` turns it off (one API call less per side).
 * - The streaming card (`streaming.mode` "partial", the default): the answer grows in one card
 *   message while the model writes (card-stream.ts); the final send commits it.
 */
export async function feishuProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<FeishuAccount>,
): Promise<ProgressState> {
  const target = feishuTarget(ctx);
  if (!target?.credentials) return state;
  const sender = { account: target.account, credentials: target.credentials };
  if (event.type === "text-delta") return streamIntoCard(route, event.soFar, state, ctx, sender);
  if (event.type !== "run-started" && event.type !== "run-finished") return state;
  const messageId = route.replyToMessageId;
  if (!messageId || !target.account.typingIndicator) return state;
  const path = `open-apis/im/v1/messages/${encodeURIComponent(messageId)}/reactions`;
  if (event.type === "run-started") {
    if (state.typingReactionId) return state;
    const answer = await callFeishuApi(
      target.account,
      target.credentials,
      "POST",
      path,
      { reaction_type: { emoji_type: "Typing" } },
      ctx.signal,
    );
    if (!answer.ok) {
      console.warn(
        `feishu typing reaction failed: ${answer.status} ${answer.code ?? ""} ${answer.message}`,
      );
      return state;
    }
    const id = (answer.data as { reaction_id?: unknown } | undefined)?.reaction_id;
    return typeof id === "string" ? { ...state, typingReactionId: id } : state;
  }
  if (!state.typingReactionId) return state;
  const answer = await callFeishuApi(
    target.account,
    target.credentials,
    "DELETE",
    `${path}/${encodeURIComponent(state.typingReactionId)}`,
    undefined,
    ctx.signal,
  );
  if (!answer.ok)
    console.warn(
      `feishu typing reaction removal failed: ${answer.status} ${answer.code ?? ""} ${answer.message}`,
    );
  const { typingReactionId: _removed, ...rest } = state;
  return rest;
}
