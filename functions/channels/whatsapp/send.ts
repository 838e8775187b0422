import type {
  OutboundMessage,
  ProgressContext,
  ProgressEvent,
  ProgressState,
  SendContext,
  SendResult,
} from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import {
  sendCompanionCommand,
  type CompanionCommand,
  type CompanionCommandResult,
} from "../companion/outbound-client.ts";
import type { WhatsAppAccount, WhatsAppReplyToMode } from "./config.ts";
import { markdownToWhatsApp } from "./format.ts";

/**
 * WhatsApp replies leave through the companion, which holds the linked session: one signed
 * `POST {companion.url}/v1/outbound` per chunk (functions/channels/companion/outbound-client.ts).
 *
 * Idempotency, end to end: the command id is derived from the account, the chat and the chunk's
 * outbox id, so a retry is the same command; the companion answers a command it already sent from
 * its receipt table, and one whose outcome it lost is sent again with the same WhatsApp message id
 * (the connector derives the id from the command id, companion/message-id.ts), which WhatsApp
 * clients keep once. So the adapter says `idempotentSends` and a lost answer is simply sent again.
 *
 * `replyToMode` first/all/batched quote the triggering message (the first chunk, or every one).
 * Typing (`composing`) runs while the agent works; a read receipt goes for each accepted message
 * unless `sendReadReceipts` is off. Both are best effort.
 */
export async function sendWhatsAppMessage(
  message: OutboundMessage,
  ctx: SendContext<WhatsAppAccount>,
): Promise<SendResult> {
  if (message.retract) return { ok: true }; // no previews are posted, so there is nothing to take back
  const account = ctx.account;
  if (!account)
    return { ok: false, retryable: false, error: "channels.whatsapp is not configured" };
  const { route } = message;
  const quoted = quotes(account.replyToMode, message.chunkIndex)
    ? route.replyToMessageId
    : undefined;
  const text = `${message.chunkIndex === 0 && account.responsePrefix ? `${account.responsePrefix} ` : ""}${markdownToWhatsApp(message.text)}`;
  const answer = await sendCompanionCommand(ctx.config.companion, ctx.env, {
    commandId: await commandId("send", route, message.id),
    channel: "whatsapp",
    accountId: route.accountId,
    op: "send",
    target: { conversationId: route.to, ...(quoted ? { replyToId: quoted } : {}) },
    payload: {
      text,
      ...(quoted && route.extra?.participant ? { quotedParticipant: route.extra.participant } : {}),
    },
  });
  return sendResult(answer);
}

function quotes(mode: WhatsAppReplyToMode, chunkIndex: number): boolean {
  return mode === "all" || ((mode === "first" || mode === "batched") && chunkIndex === 0);
}

/** `wa-` + SHA-256 of the op, account, chat and what the command is for (an outbox id, a run, a message). */
export async function commandId(op: string, route: ReplyRoute, of: string): Promise<string> {
  const key = `${op}\u0000${route.accountId}\u0000${route.to}\u0000${of}`;
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)),
  );
  return `wa-${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/**
 * The companion's answer in the outbox's vocabulary: sent (or a duplicate of a sent command) →
 * done; not reachable → the outcome is unknown, and the same command goes again; not connected
 * (the account is not linked right now, 409) or busy → retried later; refused → final.
 */
export function sendResult(answer: CompanionCommandResult): SendResult {
  if (answer.outcome === "sent")
    return { ok: true, platformMessageId: answer.platformMessageIds[0] };
  if (answer.outcome === "permanent") return { ok: false, retryable: false, error: answer.reason };
  if (answer.reason.startsWith("companion unreachable") || / 5\d\d /.test(`${answer.reason} `))
    return { ok: false, outcomeUnknown: true, error: answer.reason };
  return {
    ok: false,
    retryable: true,
    retryAfterMs: answer.retryAfterMs ?? 5_000,
    error: answer.reason,
  };
}

/** Read receipt on accept, `composing` while a run works and `paused` after it; never throws. */
export async function whatsappProgress(
  route: ReplyRoute,
  event: ProgressEvent,
  state: ProgressState,
  ctx: ProgressContext<WhatsAppAccount>,
): Promise<ProgressState> {
  const account = ctx.account;
  if (!account) return state;
  let command: CompanionCommand | undefined;
  if (event.type === "accepted" && account.sendReadReceipts && route.replyToMessageId) {
    command = {
      commandId: await commandId("markRead", route, route.replyToMessageId),
      channel: "whatsapp",
      accountId: route.accountId,
      op: "markRead",
      target: { conversationId: route.to, messageId: route.replyToMessageId },
      payload: route.extra?.participant ? { participant: route.extra.participant } : {},
    };
  } else if ((event.type === "run-started" || event.type === "run-finished") && ctx.runId) {
    const presence = event.type === "run-started" ? "composing" : "paused";
    command = {
      commandId: await commandId("typing", route, `${ctx.runId}:${presence}`),
      channel: "whatsapp",
      accountId: route.accountId,
      op: "typing",
      target: { conversationId: route.to },
      payload: { presence },
    };
  }
  if (command)
    await sendCompanionCommand(ctx.config.companion, ctx.env, command).catch(() => undefined);
  return state;
}
