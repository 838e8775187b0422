import type { TelegramAccount } from "./config.ts";
import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { commitPreview, retractPreview } from "../preview-stream.ts";
import type { BotApiResult } from "./client.ts";
import { markdownToTelegramHtml } from "./format.ts";
import { deleteMessage, editText, sendText } from "./messages.ts";
import { replyParams, telegramTarget, threadParams } from "./route.ts";

/**
 * One reply chunk out to Telegram (`sendMessage`, HTML). Never retries on its own: the outbox does,
 * waiting out a 429's `retry_after`.
 *
 * - The first chunk of a run that left a live preview (`progressState.previewMessageId`, streaming
 *   partial/block) edits that message into the answer instead of posting a second one; if Telegram
 *   refuses the edit (the preview was deleted, …) the chunk is posted and the preview removed.
 * - A progress-mode status draft (`statusMessageId`) is removed before the answer is posted.
 * - `retract` (a silent or aborted run) removes the run's preview and status draft, posts nothing.
 */
export async function sendTelegramMessage(
  message: OutboundMessage,
  ctx: SendContext<TelegramAccount>,
): Promise<SendResult> {
  const { route } = message;
  const target = telegramTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.telegram is not configured" };
  if (!target.botToken)
    return {
      ok: false,
      retryable: false,
      error: `no Telegram bot token for account ${route.accountId}`,
    };
  const bot = { account: target.account, botToken: target.botToken, signal: ctx.signal };
  const state = message.progressState ?? {};
  const chat = state.previewChatId ?? route.to;

  if (message.retract) {
    return retractPreview([state.previewMessageId, state.statusMessageId], async (id) => {
      const removed = await deleteMessage(bot, chat, id);
      return removed.ok ? { ok: true } : sendResultFromFailure(removed);
    });
  }
  if (message.chunkIndex === 0 && state.statusMessageId) {
    // Progress mode clears its status draft at completion; normally run-finished did it already.
    await deleteMessage(bot, chat, state.statusMessageId).catch(() => undefined);
  }

  const content = { html: markdownToTelegramHtml(message.text), plain: message.text };
  return commitPreview({
    previewId: message.chunkIndex === 0 ? state.previewMessageId : undefined,
    edit: async (previewId) => {
      const edited = await editText(bot, chat, previewId, content);
      if (edited.ok) return { ok: true };
      if (edited.kind === "lost" || edited.errorCode === 429 || edited.errorCode >= 500)
        return sendResultFromFailure(edited);
      return "gone"; // Telegram refused the edit for good (preview deleted, too old): post the chunk instead.
    },
    post: async () => {
      const sent = await sendText(bot, route.to, content, {
        ...threadParams(route, "message"),
        ...replyParams(route, target.account, message.chunkIndex),
      });
      return sent.ok
        ? { ok: true, platformMessageId: String(sent.result.message_id) }
        : sendResultFromFailure(sent);
    },
    discard: (previewId) => deleteMessage(bot, chat, previewId),
  });
}

/**
 * Did an earlier attempt whose answer was lost reach Telegram? A bot cannot read a chat's history
 * and the Bot API takes no idempotency key, so a posted message cannot be looked up: such a chunk is
 * `untraceable` and not idempotent — the outbox does not send it again (a duplicate answer is worse
 * than a gap) and tells the user once. Two cases are safe to repeat: the edit of a run's preview
 * into the answer (editing to the same text again changes nothing; Telegram answers "not modified")
 * and a retract (deleting what is already gone is fine).
 */
export async function reconcileTelegramMessage(
  message: OutboundMessage,
  _ctx: SendContext,
): Promise<ReconcileResult> {
  if (message.retract)
    return { outcome: "untraceable", reason: "a retract only deletes", idempotent: true };
  if (message.chunkIndex === 0 && message.progressState?.previewMessageId) {
    return {
      outcome: "untraceable",
      reason: "the answer edits the run's preview; editing again is harmless",
      idempotent: true,
    };
  }
  return {
    outcome: "untraceable",
    reason:
      "the Telegram Bot API can neither read a chat's history nor drop a repeated sendMessage",
    idempotent: false,
  };
}

/**
 * A failed call in the outbox's vocabulary: 429 waits `retry_after` seconds; 5xx is retried; other
 * 4xx (bad chat, bot blocked, bad request) are final; a lost answer is reconciled, never repeated blindly.
 */
export function sendResultFromFailure(
  failure: Extract<BotApiResult<unknown>, { ok: false }>,
): Extract<SendResult, { ok: false }> {
  if (failure.kind === "lost") return { ok: false, outcomeUnknown: true, error: failure.error };
  const error = `telegram ${failure.errorCode}: ${failure.description}`.slice(0, 300);
  if (failure.errorCode === 429 || failure.status === 429) {
    return {
      ok: false,
      retryable: true,
      retryAfterMs: Math.max(1, failure.retryAfterSeconds ?? 1) * 1000,
      error,
    };
  }
  return { ok: false, retryable: failure.errorCode >= 500 || failure.status >= 500, error };
}
