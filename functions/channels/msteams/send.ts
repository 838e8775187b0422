import type { MsTeamsAccount } from "./config.ts";
import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { chunkText } from "../chunk.ts";
import { commitPreview, retractPreview } from "../preview-stream.ts";
import {
  activitiesPath,
  activityPath,
  callConnector,
  connectorTarget,
  requestConnector,
  sendResultOf,
  type ConnectorTarget,
} from "./api.ts";
import { markdownToTeams } from "./format.ts";
import { finalStreamActivity } from "./stream.ts";

/**
 * One reply chunk out to Teams: POST {serviceUrl}/v3/conversations/{id}/activities, in the channel
 * thread when the route names one (`;messageid=<root>`), as Markdown text.
 *
 * The first chunk of a run that streamed (stream.ts) commits it instead of posting again: it ends a
 * personal chat's native stream (a `final` message naming the stream id) or is the last edit of a
 * group's preview message. A final the stream refuses (the user pressed Stop, the stream timed out)
 * and a preview that is gone (404) fall back to a message of its own, so the answer is never lost.
 *
 * Plain posts are not idempotent: the Bot Connector takes no client id for an activity and Teams
 * offers bots no way to read a conversation's history back, so a post with no answer is reported as
 * outcome unknown and reconcile says "untraceable": the outbox then tells the user once instead of
 * risking a duplicate. Committing a stream is safe to repeat (reconcile below). 429 (with
 * Retry-After), 5xx and 401 (token refreshed) are retried by the outbox.
 */
export async function sendTeamsMessage(
  message: OutboundMessage,
  ctx: SendContext<MsTeamsAccount>,
): Promise<SendResult> {
  const target = connectorTarget(message.route, ctx);
  if ("error" in target) return { ok: false, retryable: false, error: target.error };
  const progress = message.progressState ?? {};
  if (message.retract) return removeLiveReply(target, message);
  const text = markdownToTeams(message.text);
  if (!text) return { ok: true };
  const [body] = chunkText(text, target.account.textChunkLimit, "length");
  const post = () =>
    callConnector(
      target,
      "POST",
      activitiesPath(message.route),
      { type: "message", text: body, textFormat: "markdown" },
      "send",
      ctx.signal,
    );
  if (message.chunkIndex === 0 && progress.streamId) {
    const answer = await requestConnector(
      target,
      "POST",
      activitiesPath(message.route),
      finalStreamActivity(progress.streamId, body!),
      ctx.signal,
    );
    if (
      answer.kind !== "answered" ||
      answer.status < 400 ||
      answer.status >= 500 ||
      answer.status === 429 ||
      answer.status === 401
    )
      return sendResultOf(answer, "stream final");
    console.warn(
      `msteams stream final refused (HTTP ${answer.status}); posting the answer as a message`,
    );
    return post();
  }
  return commitPreview({
    previewId: message.chunkIndex === 0 ? progress.previewId : undefined,
    edit: async (previewId) => {
      const edit = { type: "message", id: previewId, text: body, textFormat: "markdown" };
      const answer = await requestConnector(
        target,
        "PUT",
        activityPath(message.route, previewId),
        edit,
        ctx.signal,
      );
      return answer.kind === "answered" && answer.status === 404
        ? "gone"
        : sendResultOf(answer, "preview edit");
    },
    post,
  });
}

/** A run that ends without a reply: its preview (or stream) is deleted; already gone is fine. */
async function removeLiveReply(
  target: ConnectorTarget,
  message: OutboundMessage,
): Promise<SendResult> {
  return retractPreview(
    [message.progressState?.streamId ?? message.progressState?.previewId],
    async (id) => {
      const answer = await requestConnector(
        target,
        "DELETE",
        activityPath(message.route, id),
        undefined,
      );
      if (answer.kind === "answered" && answer.status === 404) return { ok: true };
      return sendResultOf(answer, "remove preview");
    },
  );
}

/**
 * A send with no answer. Editing a preview and deleting are safe to repeat ("untraceable" but
 * idempotent: the outbox sends again). A lost stream final is sent again here: Teams takes it if the
 * stream is still open, and refuses it (4xx) once the stream has ended — by the lost final itself —
 * so either way the answer is shown once. Anything else cannot be checked (see above).
 */
export async function reconcileTeamsMessage(
  message: OutboundMessage,
  ctx: SendContext<MsTeamsAccount>,
): Promise<ReconcileResult> {
  const progress = message.progressState ?? {};
  if (message.retract || (message.chunkIndex === 0 && progress.previewId)) {
    return {
      outcome: "untraceable",
      reason: "editing or deleting an activity twice shows it once",
      idempotent: true,
    };
  }
  if (message.chunkIndex === 0 && progress.streamId) {
    const target = connectorTarget(message.route, ctx);
    if ("error" in target) throw new Error(target.error);
    const text = markdownToTeams(message.text);
    const [body] = chunkText(text || "…", target.account.textChunkLimit, "length");
    const answer = await requestConnector(
      target,
      "POST",
      activitiesPath(message.route),
      finalStreamActivity(progress.streamId, body!),
      ctx.signal,
    );
    if (
      answer.kind === "answered" &&
      ((answer.status >= 200 && answer.status < 300) ||
        (answer.status >= 400 &&
          answer.status < 500 &&
          answer.status !== 429 &&
          answer.status !== 401))
    ) {
      return { outcome: "landed", platformMessageId: progress.streamId };
    }
    throw new Error(
      `msteams stream final: ${answer.kind === "answered" ? `HTTP ${answer.status}` : answer.error}`,
    );
  }
  return {
    outcome: "untraceable",
    reason: "the Bot Connector has no idempotency key and bots cannot read conversation history",
    idempotent: false,
  };
}
