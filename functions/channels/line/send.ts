import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { callLineApi, firstSentMessageId, sendResultFromAnswer } from "./api.ts";
import type { LineAccount } from "./config.ts";
import { lineTarget } from "./target.ts";
import { lineTextMessages, markdownToLineText } from "./format.ts";

/**
 * One reply chunk out to LINE, as one API call of at most five text messages. Never retries on its
 * own (the outbox does).
 *
 * - The first chunk answering an event uses the event's reply token (free, and the message appears
 *   as the answer) while the token is younger than `replyTokenMaxAgeSeconds`. LINE refuses a token
 *   that is expired or already used with 400 "Invalid reply token": nothing was sent, so the chunk
 *   goes out by push instead, in the same call.
 * - Everything else is pushed to the conversation (`to` = user, group or room id) with
 *   `X-Line-Retry-Key` derived from the outbox chunk id: a repeat of the same chunk is dropped by
 *   LINE (409, "already accepted"), which counts as sent. So a push that got no answer (or a 5xx)
 *   is simply retried: it is never an unknown outcome.
 * - A reply-token call cannot carry a retry key (LINE answers 400 to one) and leaves nothing to look
 *   up, so a reply whose outcome is unknown is never repeated: `reconcileLineMessage` says so and the
 *   outbox tells the user once instead of risking a duplicate.
 */
export async function sendLineMessage(
  message: OutboundMessage,
  ctx: SendContext<LineAccount>,
): Promise<SendResult> {
  // LINE has no previews to take back: a retract has nothing to do.
  if (message.retract) return { ok: true };
  const target = lineTarget(ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.line is not configured" };
  if (!target.accessToken)
    return {
      ok: false,
      retryable: false,
      error: `no LINE channel access token for account ${message.route.accountId}`,
    };
  const { account } = target;
  const texts = lineTextMessages(
    markdownToLineText(message.text),
    account.textChunkLimit,
    account.chunkMode,
  );
  if (!texts.length) return { ok: true };
  const messages = texts.map((text) => ({ type: "text", text }));
  const api = { apiBaseUrl: account.apiBaseUrl, accessToken: target.accessToken };

  const replyToken = usableReplyToken(message, account, Date.now());
  if (replyToken) {
    const answer = await callLineApi(
      api,
      "v2/bot/message/reply",
      { replyToken, messages },
      { signal: ctx.signal },
    );
    if (answer.ok) return { ok: true, platformMessageId: firstSentMessageId(answer.body) };
    if (!(answer.status === 400 && /reply token/i.test(answer.message)))
      return sendResultFromAnswer(answer, "reply", false);
    // Expired or used: LINE sent nothing. Push it instead.
  }

  const answer = await callLineApi(
    api,
    "v2/bot/message/push",
    { to: message.route.to, messages },
    {
      headers: { "x-line-retry-key": await lineRetryKey(message.route.accountId, message.id) },
      signal: ctx.signal,
    },
  );
  if (answer.ok) return { ok: true, platformMessageId: firstSentMessageId(answer.body) };
  // The retry key was accepted before: this chunk is already on its way.
  if (answer.status === 409)
    return {
      ok: true,
      platformMessageId: answer.headers.get("x-line-accepted-request-id") ?? undefined,
    };
  return sendResultFromAnswer(answer, "push", true);
}

/**
 * After an attempt whose outcome is unknown: a reply-token send that got no answer, or any send
 * interrupted by a crash. LINE offers no lookup of sent messages, so nothing "landed" can be proven;
 * what matters is whether a repeat is safe: a push is (its retry key makes LINE drop a repeat), a
 * reply-token send is not. Whether the earlier attempt may have used the token is judged from the
 * time the chunk was queued (the attempt came no earlier), erring towards "may have".
 */
export async function reconcileLineMessage(
  message: OutboundMessage,
  ctx: SendContext<LineAccount>,
): Promise<ReconcileResult> {
  const target = lineTarget(ctx);
  const sentAt = message.queuedAt ?? Date.now();
  // A file always goes by push under its retry key (send-file.ts), never on the reply token.
  if (!message.file && target && usableReplyToken(message, target.account, sentAt)) {
    return {
      outcome: "untraceable",
      reason: "a LINE reply-token send leaves nothing to look up and cannot be repeated safely",
      idempotent: false,
    };
  }
  return {
    outcome: "untraceable",
    reason: "LINE has no lookup of sent messages; the push carries X-Line-Retry-Key",
    idempotent: true,
  };
}

/** The event's reply token, when this chunk may use it: first chunk, token known, young enough. */
export function usableReplyToken(
  message: Pick<OutboundMessage, "chunkIndex" | "route">,
  account: LineAccount,
  now: number,
): string | undefined {
  if (message.chunkIndex !== 0) return undefined;
  const token = message.route.extra?.replyToken;
  const issuedAt = Number(message.route.extra?.replyTokenAt);
  if (!token || !Number.isFinite(issuedAt)) return undefined;
  return now - issuedAt < account.replyTokenMaxAgeSeconds * 1000 ? token : undefined;
}

/**
 * `X-Line-Retry-Key` for one outbox chunk: LINE wants a hexadecimal UUID, so the chunk id (stable
 * across retries) is hashed into one (version/variant bits set as in a v4 UUID).
 */
export async function lineRetryKey(accountId: string, chunkId: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(`edgeclaw:line:${accountId}:${chunkId}`),
    ),
  );
  const bytes = digest.slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
