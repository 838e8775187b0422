import type { OutboundMessage, SendResult } from "../adapter.ts";
import { sendResultFromAnswer, type FeishuAnswer } from "./api.ts";
import { endCardStreaming, nextCardSequence, setCardText } from "./card.ts";
import { sendCardMessage } from "./card-stream.ts";
import { feishuSendUuid, recallFeishuMessage, type FeishuSender } from "./messages.ts";

/**
 * The end of a run that streamed into a card (card-stream.ts), from the outbox:
 *
 * - `commitCard`: the reply's first chunk becomes the card's text and streaming ends — the answer is
 *   committed once, in the message the user watched grow. A card message whose answer was lost is
 *   first sent again with the run's uuid (Feishu answers with the one it has). Repeating the whole
 *   commit (outbox retry) sets the same text again: harmless. When Feishu refuses the card for good
 *   (deleted, expired), the card message is recalled and "refused" tells the caller to post the
 *   chunk as an ordinary message instead.
 * - `retractCard`: a silent or aborted run recalls the card, so no half answer stays in the chat.
 */

export async function commitCard(
  sender: FeishuSender,
  message: OutboundMessage,
  text: string,
  signal?: AbortSignal,
): Promise<SendResult | "refused"> {
  const state = message.progressState ?? {};
  const cardId = state.cardId!;
  let cardMessageId = state.cardMessageId;
  if (!cardMessageId) {
    // Created but never shown: nothing to take over.
    if (!state.cardSendPending || !message.runId) return "refused";
    const sent = await sendCardMessage(sender, message.route, cardId, message.runId, signal);
    if (!sent.ok) return sent.retryable ? sent : "refused";
    cardMessageId = sent.platformMessageId ?? "";
  }
  const sequence = nextCardSequence(state, Date.now());
  const uuid = (step: string) =>
    feishuSendUuid(message.route.accountId, cardId, `${step}:${message.id}`);
  const shown = await setCardText(
    sender.account,
    sender.credentials,
    cardId,
    text,
    sequence,
    await uuid("final"),
    signal,
  );
  if (!shown.ok) return refusedOrRetry(shown, sender, cardMessageId, "card text", signal);
  const ended = await endCardStreaming(
    sender.account,
    sender.credentials,
    cardId,
    text,
    sequence + 1,
    await uuid("end"),
    signal,
  );
  if (!ended.ok) {
    const failure = sendResultFromAnswer(ended, "card settings");
    // The text is in place; Feishu ends streaming by itself after 10 minutes if it refuses for good.
    if (failure.retryable) return failure;
    console.warn(`feishu streaming card left streaming: ${failure.error}`);
  }
  return { ok: true, platformMessageId: cardMessageId || undefined };
}

export async function retractCard(
  sender: FeishuSender,
  message: OutboundMessage,
  signal?: AbortSignal,
): Promise<SendResult> {
  const state = message.progressState ?? {};
  let cardMessageId = state.cardMessageId;
  if (!cardMessageId && state.cardId && state.cardSendPending && message.runId) {
    // Its answer was lost: the repeat names the card message if it landed (and posts it if not, to be recalled at once).
    const sent = await sendCardMessage(sender, message.route, state.cardId, message.runId, signal);
    if (!sent.ok) return sent.retryable ? sent : { ok: true };
    cardMessageId = sent.platformMessageId;
  }
  if (!cardMessageId) return { ok: true };
  const recalled = await recallFeishuMessage(sender, cardMessageId, signal);
  return recalled.ok ? { ok: true } : sendResultFromAnswer(recalled, "recall card");
}

async function refusedOrRetry(
  answer: Extract<FeishuAnswer, { ok: false }>,
  sender: FeishuSender,
  cardMessageId: string,
  what: string,
  signal?: AbortSignal,
): Promise<SendResult | "refused"> {
  const failure = sendResultFromAnswer(answer, what);
  if (failure.retryable) return failure;
  console.warn(`feishu streaming card refused the answer, posting it instead: ${failure.error}`);
  if (cardMessageId) {
    const recalled = await recallFeishuMessage(sender, cardMessageId, signal);
    if (!recalled.ok)
      console.warn(
        `feishu streaming card not recalled: ${recalled.status} ${recalled.code ?? ""} ${recalled.message}`,
      );
  }
  return "refused";
}
