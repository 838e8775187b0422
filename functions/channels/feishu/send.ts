import type { OutboundMessage, SendContext, SendResult } from "../adapter.ts";
import { feishuAccountForRoute, feishuSecrets, type FeishuAccount } from "./config.ts";
import { callFeishuApi, sendResultFromAnswer, type FeishuCredentials } from "./api.ts";
import { markdownToFeishuPost } from "./format.ts";

/**
 * One reply chunk out to Feishu as a rich-text post. Never retries on its own (the outbox does).
 *
 * - The first chunk answers the user's message through the reply API
 *   (POST open-apis/im/v1/messages/{message_id}/reply), in its topic thread when the message was in
 *   one or `replyInThread` is "enabled" (`reply_in_thread`); later chunks of a threaded reply follow
 *   the same way, the others go to the chat (POST open-apis/im/v1/messages?receive_id_type=chat_id).
 * - Every send carries `uuid`, derived from the outbox chunk id: Feishu sends a message only once
 *   per uuid within an hour, so a send that got no answer is repeated safely (`idempotentSends`).
 */
export async function sendFeishuMessage(message: OutboundMessage, ctx: SendContext): Promise<SendResult> {
  // No live preview is kept on Feishu: a retract has nothing to take back.
  if (message.retract) return { ok: true };
  const target = feishuTarget(message.route.accountId, ctx);
  if (!target) return { ok: false, retryable: false, error: "channels.feishu is not configured" };
  if (!target.credentials) return { ok: false, retryable: false, error: `no Feishu appId/appSecret for account ${message.route.accountId}` };
  const text = message.text.trim();
  if (!text) return { ok: true };
  const uuid = await feishuSendUuid(message.route.accountId, message.route.to, message.id);
  const content = markdownToFeishuPost(text);
  const threaded = message.route.extra?.inThread === "1" || target.account.replyInThread === "enabled";
  const replyTo = message.route.replyToMessageId;

  if (replyTo && (message.chunkIndex === 0 || threaded)) {
    const answer = await callFeishuApi(
      target.account,
      target.credentials,
      "POST",
      `open-apis/im/v1/messages/${encodeURIComponent(replyTo)}/reply`,
      { msg_type: "post", content, uuid, ...(threaded ? { reply_in_thread: true } : {}) },
      ctx.signal,
    );
    if (answer.ok) return { ok: true, platformMessageId: messageId(answer.data) };
    // The message answered was recalled or deleted: say it in the chat instead.
    if (!(answer.code === 230011 || answer.code === 231003)) return sendResultFromAnswer(answer, "reply");
  }
  const answer = await callFeishuApi(
    target.account,
    target.credentials,
    "POST",
    "open-apis/im/v1/messages?receive_id_type=chat_id",
    { receive_id: message.route.to, msg_type: "post", content, uuid },
    ctx.signal,
  );
  return answer.ok ? { ok: true, platformMessageId: messageId(answer.data) } : sendResultFromAnswer(answer, "send");
}

export interface FeishuTarget {
  account: FeishuAccount;
  credentials?: FeishuCredentials;
}

export function feishuTarget(accountId: string, ctx: Pick<SendContext, "config" | "env">): FeishuTarget | undefined {
  const account = feishuAccountForRoute(ctx.config, accountId);
  if (!account) return undefined;
  const secrets = feishuSecrets(account, ctx.env);
  return { account, credentials: secrets.appId && secrets.appSecret ? { appId: secrets.appId, appSecret: secrets.appSecret } : undefined };
}

/**
 * Feishu's `uuid` is at most 50 characters and outbox ids are longer: a UUID-shaped SHA-256 of the
 * account, conversation and chunk id, the same on every attempt of the chunk.
 */
export async function feishuSendUuid(accountId: string, to: string, chunkId: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${accountId}\n${to}\n${chunkId}`)));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function messageId(data: unknown): string | undefined {
  if (typeof data === "object" && data !== null && typeof (data as Record<string, unknown>).message_id === "string") return (data as Record<string, string>).message_id;
  return undefined;
}
