import type { ReplyRoute } from "../../core/envelope.ts";
import type { ProgressContext, ProgressEvent, ProgressState } from "../adapter.ts";
import { callGraph } from "./api.ts";
import type { WhatsAppCloudAccount } from "./config.ts";
import { messagesEndpoint } from "./send.ts";

/**
 * Read receipts and the typing indicator (Cloud API "Mark messages as read", "Typing indicators":
 * POST /<phone_number_id>/messages `{ status: "read", message_id }`, plus `typing_indicator: {
 * type: "text" }`). Both need `sendReadReceipts` (OpenClaw's key, default true): Meta shows typing
 * only together with the read mark. On accept the message is marked read; from the run's start the
 * indicator shows, and since Meta hides it after 25 s (or at the reply) it is renewed on a later
 * step once 20 s have passed. Streamed text is not shown: the reply goes out whole. Best effort:
 * never throws; a failure is one log line.
 */
export async function whatsappCloudProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<WhatsAppCloudAccount>,
): Promise<ProgressState> {
  const typing = event.type !== "accepted";
  const endpoint = messagesEndpoint(ctx, route.extra?.phoneNumberId);
  const now = Date.now();
  if (
    event.type === "text-delta" ||
    event.type === "run-finished" ||
    !ctx.account?.sendReadReceipts ||
    "error" in endpoint ||
    Number(typing ? state.typingAt : state.readAt) > now - 20_000
  )
    return state;
  const answer = await callGraph(endpoint.url, endpoint.token, ctx.signal, {
    messaging_product: "whatsapp",
    status: "read",
    message_id: route.extra?.messageId,
    typing_indicator: typing ? { type: "text" } : undefined,
  });
  if (!answer.ok) console.warn(`whatsapp cloud read/typing failed: ${answer.error.message}`);
  return answer.ok ? { ...state, [typing ? "typingAt" : "readAt"]: String(now) } : state;
}
