import type { FeishuAccount } from "./config.ts";
import type { ProgressContext, ProgressState } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  answerCard,
  cardMessageContent,
  createCard,
  nextCardSequence,
  setCardText,
  streamsThroughCard,
} from "./card.ts";
import { feishuSendUuid, postFeishuMessage, type FeishuSender } from "./messages.ts";

/**
 * The live half of a streamed reply: on the run's first text the card is created and sent (as the
 * reply to the user's message), then its text is replaced with the answer so far at most once a
 * second (`PREVIEW_UPDATE_INTERVAL_MS`, like the Telegram and Slack previews; Feishu allows 10
 * operations a second per card). With `streaming.block.enabled` the card shows completed blocks
 * (up to the last blank line) only. The card shows what the reply's first chunk will hold
 * (`textChunkLimit`); the final send commits it (card-reply.ts).
 *
 * Crash safety: the card message carries a `uuid` derived from the run, and `cardSendPending` is
 * stored before it is sent. A send whose answer was lost is repeated with the same uuid — by the next
 * delta or by the final send — and Feishu answers with the message it already sent instead of a
 * second card. A card entity created but never sent is invisible and harmless. Best effort: failures
 * are logged and never thrown; a card Feishu refuses stops the previews (`cardBroken`).
 */

export const PREVIEW_UPDATE_INTERVAL_MS = 1000;

export async function streamIntoCard(
  route: ReplyRoute,
  soFar: string,
  state: ProgressState,
  ctx: ProgressContext<FeishuAccount>,
  sender: FeishuSender,
): Promise<ProgressState> {
  const { account, credentials } = sender;
  if (!streamsThroughCard(account) || state.cardBroken || !ctx.runId) return state;
  let shown = soFar.slice(0, account.textChunkLimit).trimEnd();
  if (account.streaming?.block?.enabled) {
    const blockEnd = shown.lastIndexOf("\n\n");
    if (blockEnd <= 0) return state;
    shown = shown.slice(0, blockEnd).trimEnd();
  }
  if (!shown) return state;
  const now = Date.now();
  const next: ProgressState = { ...state };

  if (!next.cardId) {
    next.cardCreatedAt = String(now);
    const created = await createCard(account, credentials, answerCard(shown, true), ctx.signal);
    if (!("cardId" in created)) {
      console.warn(
        `feishu streaming card not created: ${created.status} ${created.code ?? ""} ${created.message}`,
      );
      return { ...state, cardBroken: "1" };
    }
    next.cardId = created.cardId;
    next.cardSeq = "0";
    next.cardShownAt = String(now);
    // The answer only grows during a run: an unchanged length is an unchanged text.
    next.cardShownLength = String(shown.length);
  }
  if (!next.cardMessageId) {
    next.cardSendPending = "1";
    ctx.checkpoint?.(next);
    const sent = await sendCardMessage(sender, route, next.cardId, ctx.runId, ctx.signal);
    if (sent.ok) {
      next.cardMessageId = sent.platformMessageId ?? "";
      delete next.cardSendPending;
    } else if (!sent.retryable) {
      // Refused: nothing was posted. The answer will go out as a message.
      console.warn(`feishu streaming card not sent: ${sent.error}`);
      delete next.cardSendPending;
      next.cardBroken = "1";
    }
    return next;
  }

  if (
    now - Number(next.cardShownAt ?? 0) < PREVIEW_UPDATE_INTERVAL_MS ||
    next.cardShownLength === String(shown.length)
  )
    return state;
  const sequence = nextCardSequence(next, now);
  const updated = await setCardText(
    account,
    credentials,
    next.cardId,
    shown,
    sequence,
    await feishuSendUuid(route.accountId, next.cardId, `text:${sequence}`),
    ctx.signal,
  );
  next.cardSeq = String(sequence);
  next.cardShownAt = String(now);
  if (updated.ok) next.cardShownLength = String(shown.length);
  else {
    console.warn(
      `feishu streaming card update failed: ${updated.status} ${updated.code ?? ""} ${updated.message}`,
    );
    const limited = updated.status === 429 || updated.status >= 500 || updated.status === 0;
    if (!limited) next.cardBroken = "1";
  }
  return next;
}

/** The card's one message, the reply to the user's message; the same run always sends the same uuid. */
export async function sendCardMessage(
  sender: FeishuSender,
  route: ReplyRoute,
  cardId: string,
  runId: string,
  signal?: AbortSignal,
) {
  const uuid = await feishuSendUuid(route.accountId, route.to, `card:${runId}`);
  return postFeishuMessage(
    sender,
    route,
    0,
    { msg_type: "interactive", content: cardMessageContent(cardId) },
    uuid,
    signal,
  );
}
