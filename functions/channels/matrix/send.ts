import type {
  OutboundMessage,
  ProgressContext,
  ProgressEvent,
  ProgressState,
  SendContext,
  SendResult,
} from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import type { MatrixAccount } from "./config.ts";
import { matrixApi, matrixBot, type MatrixCall } from "./api.ts";

/**
 * One reply chunk out to Matrix: `PUT /rooms/{roomId}/send/m.room.message/{txnId}` in the route's
 * room, inside its thread (`m.relates_to` rel_type `m.thread`, with the reply fallback clients
 * without threads show) when the conversation is one; outside a thread, `replyToMode` first/all
 * quotes the triggering event (`m.in_reply_to`).
 *
 * Idempotency: the transaction id is derived from the chunk's outbox id, so a resend after a crash
 * or a lost answer is the same transaction, and the homeserver answers it with the event it already
 * made instead of posting again (the adapter says `idempotentSends`). The spec scopes transaction
 * ids to the access token — all of the bot's rooms — while an outbox id is unique only within its
 * session, so the id also names the account, the room and the thread, hashed to a fixed length.
 */
export async function sendMatrixMessage(
  message: OutboundMessage,
  ctx: SendContext<MatrixAccount>,
): Promise<SendResult> {
  if (message.retract) return { ok: true }; // no previews are posted, so there is nothing to take back
  const bot = matrixBot(ctx);
  if ("missing" in bot) return { ok: false, retryable: false, error: bot.missing };
  const { route } = message;
  const content: Record<string, unknown> = { msgtype: "m.text", body: message.text };
  const replyTo = route.replyToMessageId;
  if (route.threadId) {
    content["m.relates_to"] = {
      rel_type: "m.thread",
      event_id: route.threadId,
      is_falling_back: true,
      "m.in_reply_to": { event_id: replyTo ?? route.threadId },
    };
  } else if (replyTo && quotes(bot.account, message.chunkIndex)) {
    content["m.relates_to"] = { "m.in_reply_to": { event_id: replyTo } };
  }
  const txnId = await transactionId(message);
  const sent = await matrixApi<{ event_id?: string }>(
    bot,
    "PUT",
    `/rooms/${encodeURIComponent(route.to)}/send/m.room.message/${txnId}`,
    content,
  );
  return sent.ok ? { ok: true, platformMessageId: sent.value.event_id } : failure(sent);
}

/** `replyToMode`: "first" (and "batched") quote the trigger in the first chunk, "all" in every one. */
function quotes(account: MatrixAccount, chunkIndex: number): boolean {
  const mode = account.replyToMode;
  return mode === "all" || ((mode === "first" || mode === "batched") && chunkIndex === 0);
}

/** The chunk's transaction id, stable across retries and restarts: `ec` + SHA-256 of account, room, thread and outbox id. */
export async function transactionId(message: OutboundMessage): Promise<string> {
  const { route } = message;
  const key = `${route.accountId}\u0000${route.to}\u0000${route.threadId ?? ""}\u0000${message.id}`;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)),
  );
  return `ec${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** Typing while the agent works (`PUT /rooms/{roomId}/typing/{userId}`); best effort, never throws. */
export async function matrixProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<MatrixAccount>,
): Promise<ProgressState> {
  if (event.type !== "run-started" && event.type !== "run-finished") return state;
  const bot = matrixBot(ctx);
  const userId = route.extra?.botUserId;
  if ("missing" in bot || !userId) return state;
  const typing = event.type === "run-started";
  await matrixApi(
    bot,
    "PUT",
    `/rooms/${encodeURIComponent(route.to)}/typing/${encodeURIComponent(userId)}`,
    typing ? { typing, timeout: 30_000 } : { typing },
  ).catch(() => undefined);
  return state;
}

/**
 * A failed call in the outbox's vocabulary: 429 waits `retry_after_ms`; 5xx is retried; other 4xx
 * (M_FORBIDDEN: not in the room, M_UNKNOWN_TOKEN) are final; a lost answer is sent again with the
 * same transaction id.
 */
export function failure(
  call: Extract<MatrixCall<unknown>, { ok: false }>,
): Extract<SendResult, { ok: false }> {
  if (call.kind === "lost") return { ok: false, outcomeUnknown: true, error: call.error };
  if (call.status === 429)
    return {
      ok: false,
      retryable: true,
      retryAfterMs: call.retryAfterMs ?? 1000,
      error: call.message,
    };
  return { ok: false, retryable: call.status >= 500, error: call.message };
}
