import type { ProgressState } from "../adapter.ts";
import { callFeishuApi, type FeishuAnswer, type FeishuCredentials } from "./api.ts";
import type { FeishuAccount } from "./config.ts";

/**
 * Feishu's streaming card (CardKit v1, "流式更新卡片"), the way OpenClaw streams replies on Feishu:
 *
 * 1. POST open-apis/cardkit/v1/cards {type: "card_json", data} creates a card entity from Card JSON 2.0
 *    with `config.streaming_mode: true` and one markdown element (`element_id`) → `card_id`.
 * 2. The card is sent once as an interactive message whose content is {"type":"card","data":{"card_id"}}.
 * 3. PUT open-apis/cardkit/v1/cards/{card_id}/elements/{element_id}/content {content, sequence, uuid}
 *    replaces the element's text (the client types out what was added).
 * 4. PATCH open-apis/cardkit/v1/cards/{card_id}/settings {settings: '{"config":{"streaming_mode":false}}',
 *    sequence, uuid} ends streaming (Feishu would end it itself after 10 minutes).
 *
 * `sequence` must grow with every operation on a card. It is the milliseconds since the card was
 * created (stored with the run), at least one more than the last one recorded: an update whose
 * answer was lost, or that ran in a process that died, can never make a later one look stale.
 */

export const CARD_ELEMENT_ID = "answer";
/** What the card says before the first words arrive, and the chat list's preview while it streams. */
const STREAMING_SUMMARY = "…";

/** Card JSON 2.0: one markdown element; `update_multi` is required by the streaming APIs. */
export function answerCard(markdown: string, streaming: boolean): Record<string, unknown> {
  return {
    schema: "2.0",
    config: {
      streaming_mode: streaming,
      update_multi: true,
      summary: { content: streaming ? STREAMING_SUMMARY : summaryOf(markdown) },
    },
    body: {
      elements: [
        { tag: "markdown", element_id: CARD_ELEMENT_ID, content: markdown || STREAMING_SUMMARY },
      ],
    },
  };
}

/** The interactive message content that shows card entity `cardId`. */
export function cardMessageContent(cardId: string): string {
  return JSON.stringify({ type: "card", data: { card_id: cardId } });
}

export async function createCard(
  account: FeishuAccount,
  credentials: FeishuCredentials,
  card: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ cardId: string } | Extract<FeishuAnswer, { ok: false }>> {
  const answer = await callFeishuApi(
    account,
    credentials,
    "POST",
    "open-apis/cardkit/v1/cards",
    { type: "card_json", data: JSON.stringify(card) },
    signal,
  );
  if (!answer.ok) return answer;
  const cardId = (answer.data as { card_id?: unknown } | undefined)?.card_id;
  return typeof cardId === "string" && cardId
    ? { cardId }
    : { ok: false, status: 200, message: "cardkit answered without a card_id" };
}

export function setCardText(
  account: FeishuAccount,
  credentials: FeishuCredentials,
  cardId: string,
  markdown: string,
  sequence: number,
  uuid: string,
  signal?: AbortSignal,
): Promise<FeishuAnswer> {
  return callFeishuApi(
    account,
    credentials,
    "PUT",
    `open-apis/cardkit/v1/cards/${encodeURIComponent(cardId)}/elements/${CARD_ELEMENT_ID}/content`,
    { content: markdown || STREAMING_SUMMARY, sequence, uuid },
    signal,
  );
}

export function endCardStreaming(
  account: FeishuAccount,
  credentials: FeishuCredentials,
  cardId: string,
  markdown: string,
  sequence: number,
  uuid: string,
  signal?: AbortSignal,
): Promise<FeishuAnswer> {
  const settings = { config: { streaming_mode: false, summary: { content: summaryOf(markdown) } } };
  return callFeishuApi(
    account,
    credentials,
    "PATCH",
    `open-apis/cardkit/v1/cards/${encodeURIComponent(cardId)}/settings`,
    { settings: JSON.stringify(settings), sequence, uuid },
    signal,
  );
}

/** The next `sequence` for the run's card (see the header); `now` is the caller's clock. */
export function nextCardSequence(state: ProgressState, now: number): number {
  const elapsed = now - Number(state.cardCreatedAt ?? now);
  return Math.max(Number(state.cardSeq ?? 0) + 1, elapsed + 1);
}

/** One line for the chat list, as Feishu shows a card there. */
function summaryOf(markdown: string): string {
  const line = markdown
    .replace(/[`*_~#>]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return line.length <= 60 ? line : `${line.slice(0, 59)}…`;
}

/**
 * Whether replies stream through a card for this account: `streaming.mode` "partial" (OpenClaw's
 * default) unless `renderMode` is "raw" (plain messages, no cards).
 */
export function streamsThroughCard(account: FeishuAccount): boolean {
  return (account.streaming?.mode ?? "partial") === "partial" && account.renderMode !== "raw";
}
