import type { OutboundMessage, ReconcileResult, SendContext, SendResult } from "../adapter.ts";
import { callGraph, sendResultOf } from "./api.ts";
import {
  WHATSAPP_CLOUD_TEXT_LIMIT,
  graphUrl,
  whatsappCloudSecrets,
  type WhatsAppCloudAccount,
} from "./config.ts";
import { markdownToWhatsApp } from "./format.ts";

/**
 * One reply chunk out through the Cloud API: POST /<version>/<phone_number_id>/messages with
 * `{ messaging_product: "whatsapp", recipient_type, to, type: "text", text: { body } }`, and
 * `context.message_id` (the user's wamid) to quote it when `replyToMode` asks. One outbox chunk is
 * one message of at most `textChunkLimit` characters (Meta's limit: 4096). Never retries on its own.
 *
 * The Cloud API takes no idempotency key and has no lookup of what a number sent, so a send whose
 * answer was lost (no answer, a gateway's 502/504) is `outcomeUnknown`, and reconcile answers that
 * it can neither be traced nor repeated safely: the outbox tells the user once that the reply may
 * be missing instead of risking a duplicate. An error answer from Meta itself means nothing was
 * sent: throttling and "try again later" are retried, the rest (bad token, outside the 24-hour
 * window 131047, invalid recipient) is final (api.ts).
 */

/** The account's Graph URL for `<phone_number_id>/messages` and its token, or why there is none. */
export function messagesEndpoint(
  ctx: Pick<SendContext<WhatsAppCloudAccount>, "account" | "env">,
  routeNumber: string | undefined,
): { url: string; token: string } | { error: string } {
  const account = ctx.account;
  if (!account) return { error: "no channels.whatsappcloud" };
  const secrets = whatsappCloudSecrets(account, ctx.env);
  const number = secrets.phoneNumberId ?? routeNumber;
  if (!secrets.accessToken || !number)
    return { error: `no access token or phone number ID (${account.accountId})` };
  return { url: graphUrl(account, `${number}/messages`), token: secrets.accessToken };
}

export async function sendWhatsAppCloud(
  message: OutboundMessage,
  ctx: SendContext<WhatsAppCloudAccount>,
): Promise<SendResult> {
  const { route, chunkIndex } = message;
  const endpoint = messagesEndpoint(ctx, route.extra?.phoneNumberId);
  if ("error" in endpoint) return { ok: false, retryable: false, error: endpoint.error };
  // WhatsApp has no previews to take back: a retract has nothing to do.
  const formatted = markdownToWhatsApp(message.text);
  // Formatting can lengthen a chunk past Meta's limit: then it goes as written.
  const body =
    formatted.length > WHATSAPP_CLOUD_TEXT_LIMIT ? message.text.trim().slice(0, 4096) : formatted;
  if (message.retract || !body) return { ok: true };
  const mode = ctx.account!.replyToMode;
  const quote = route.replyToMessageId && (mode === "all" || (mode === "first" && !chunkIndex));
  const answer = await callGraph(endpoint.url, endpoint.token, ctx.signal, {
    messaging_product: "whatsapp",
    recipient_type: route.extra?.chatType === "group" ? "group" : "individual",
    to: route.to,
    type: "text",
    text: { body, preview_url: false },
    context: quote ? { message_id: route.replyToMessageId } : undefined,
  });
  if (!answer.ok) return sendResultOf(answer.error);
  const sent = (answer.body as { messages?: Array<{ id?: string }> } | undefined)?.messages;
  return { ok: true, platformMessageId: sent?.[0]?.id };
}

/** After an attempt whose outcome is unknown: nothing to look up, and a repeat could show twice. */
export async function reconcileWhatsAppCloud(message: OutboundMessage): Promise<ReconcileResult> {
  return {
    outcome: "untraceable",
    reason: "the Cloud API has no idempotency key and no lookup of sent messages",
    // A retract sends nothing, so "repeating" it is harmless.
    idempotent: !!message.retract,
  };
}
