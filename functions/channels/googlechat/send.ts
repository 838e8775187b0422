import type { GoogleChatAccount } from "./config.ts";
import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { chunkText } from "../chunk.ts";
import {
  callChatApi,
  chatSendFailure,
  chatTarget,
  clientMessageId,
  type ChatApiTarget,
} from "./api.ts";
import { markdownToGoogleChat } from "./format.ts";

/**
 * One reply chunk out to Google Chat (spaces.messages.create), in the message's thread for spaces
 * (`messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD`). Each chunk has a client-assigned
 * message id derived from the outbox chunk id, so a repeat after a lost answer is refused by Google
 * with ALREADY_EXISTS and counts as sent: the send is idempotent and never needs reconciling.
 *
 * The first chunk of a run that showed a typing placeholder (progress.ts) replaces the placeholder's
 * text instead of posting a second message; a run that ends without a reply deletes it.
 */
export async function sendGoogleChatMessage(
  message: OutboundMessage,
  ctx: SendContext<GoogleChatAccount>,
): Promise<SendResult> {
  const target = chatTarget(ctx);
  if ("error" in target) return { ok: false, retryable: false, error: target.error };
  const placeholder = message.progressState?.placeholder;

  if (message.retract) {
    if (!placeholder) return { ok: true };
    const answer = await callChatApi(target, "DELETE", `v1/${placeholder}`, undefined, ctx.signal);
    return answer.ok || answer.status === 404
      ? { ok: true }
      : chatSendFailure(answer, "delete placeholder");
  }

  const text = markdownToGoogleChat(message.text);
  if (!text) return { ok: true };
  // The outbox chunks to textChunkLimit before formatting; formatting can only shorten the text,
  // except link syntax, so cut again to Google's hard limit to be sure.
  const [body] = chunkText(text, target.account.textChunkLimit, "length");

  if (placeholder && message.chunkIndex === 0) {
    const answer = await callChatApi(
      target,
      "PATCH",
      `v1/${placeholder}?updateMask=text`,
      { text: body },
      ctx.signal,
    );
    if (answer.ok) return { ok: true, platformMessageId: placeholder };
    // The placeholder is gone (deleted by a person, or never posted): post the reply instead.
    if (answer.status !== 404) return chatSendFailure(answer, "edit placeholder");
  }
  return createMessage(
    target,
    message.route.to,
    message.route.threadId,
    body!,
    await clientMessageId(message.route.accountId, `chunk:${message.id}`),
    ctx.signal,
  );
}

export async function createMessage(
  target: ChatApiTarget,
  space: string,
  threadName: string | undefined,
  text: string,
  messageId: string,
  signal?: AbortSignal,
): Promise<SendResult> {
  const query = new URLSearchParams({ messageId });
  if (threadName) query.set("messageReplyOption", "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD");
  const answer = await callChatApi(
    target,
    "POST",
    `v1/${space}/messages?${query}`,
    { text, ...(threadName ? { thread: { name: threadName } } : {}) },
    signal,
  );
  const name = `${space}/messages/${messageId}`;
  if (answer.ok) return { ok: true, platformMessageId: name };
  // Sent before (an earlier attempt whose answer was lost): Google keeps one message per id.
  if (answer.status === 409) return { ok: true, platformMessageId: name };
  return chatSendFailure(answer, "create message");
}

/** Never needed in practice (sends are idempotent); says so if the outbox asks. */
export async function reconcileGoogleChatMessage(): Promise<ReconcileResult> {
  return {
    outcome: "untraceable",
    reason: "Google Chat sends carry a client message id; a repeat is refused as ALREADY_EXISTS",
    idempotent: true,
  };
}
