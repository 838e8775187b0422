import type { SendContext, SendResult } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { feishuSecrets, type FeishuAccount } from "./config.ts";
import {
  callFeishuApi,
  sendResultFromAnswer,
  type FeishuAnswer,
  type FeishuCredentials,
} from "./api.ts";

/**
 * Messages the bot sends on Feishu (IM v1): the app and credentials for a route, the reply-or-send
 * call every reply chunk and the streaming card's message go through, the `uuid` that makes a repeat
 * harmless, and the recall of a message the bot sent.
 */

export type FeishuSender = Required<FeishuTarget>;

/**
 * One message out: the first chunk of a reply (and every chunk of a threaded one) answers the user's
 * message through the reply API; the rest go to the chat. A message Feishu says was recalled or
 * deleted is answered in the chat instead.
 */
export async function postFeishuMessage(
  target: FeishuSender,
  route: ReplyRoute,
  chunkIndex: number,
  body: { msg_type: string; content: string },
  uuid: string,
  signal?: AbortSignal,
): Promise<
  Extract<SendResult, { ok: true }> | Extract<SendResult, { ok: false; retryable: boolean }>
> {
  const threaded = route.extra?.inThread === "1" || target.account.replyInThread === "enabled";
  const replyTo = route.replyToMessageId;
  if (replyTo && (chunkIndex === 0 || threaded)) {
    const answer = await callFeishuApi(
      target.account,
      target.credentials,
      "POST",
      `open-apis/im/v1/messages/${encodeURIComponent(replyTo)}/reply`,
      { ...body, uuid, ...(threaded ? { reply_in_thread: true } : {}) },
      signal,
    );
    if (answer.ok) return { ok: true, platformMessageId: messageId(answer.data) };
    if (!(answer.code === 230011 || answer.code === 231003))
      return sendResultFromAnswer(answer, "reply");
  }
  const answer = await callFeishuApi(
    target.account,
    target.credentials,
    "POST",
    "open-apis/im/v1/messages?receive_id_type=chat_id",
    { receive_id: route.to, ...body, uuid },
    signal,
  );
  return answer.ok
    ? { ok: true, platformMessageId: messageId(answer.data) }
    : sendResultFromAnswer(answer, "send");
}

export interface FeishuTarget {
  account: FeishuAccount;
  credentials?: FeishuCredentials;
}

/** The account the pipeline resolved for the call (the route's), with its app credentials. */
export function feishuTarget(
  ctx: Pick<SendContext<FeishuAccount>, "account" | "env">,
): FeishuTarget | undefined {
  const account = ctx.account;
  if (!account) return undefined;
  const secrets = feishuSecrets(account, ctx.env);
  return {
    account,
    credentials:
      secrets.appId && secrets.appSecret
        ? { appId: secrets.appId, appSecret: secrets.appSecret }
        : undefined,
  };
}

/**
 * Feishu's `uuid` is at most 50 characters and outbox ids are longer: a UUID-shaped SHA-256 of the
 * account, conversation and chunk id, the same on every attempt of the chunk.
 */
export async function feishuSendUuid(
  accountId: string,
  to: string,
  chunkId: string,
): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode(`${accountId}\n${to}\n${chunkId}`),
    ),
  );
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function messageId(data: unknown): string | undefined {
  if (
    typeof data === "object" &&
    data !== null &&
    typeof (data as Record<string, unknown>).message_id === "string"
  )
    return (data as Record<string, string>).message_id;
  return undefined;
}

/** Recalls a message the bot sent (DELETE open-apis/im/v1/messages/{message_id}); already gone counts as done. */
export async function recallFeishuMessage(
  target: FeishuSender,
  messageId: string,
  signal?: AbortSignal,
): Promise<FeishuAnswer> {
  const answer = await callFeishuApi(
    target.account,
    target.credentials,
    "DELETE",
    `open-apis/im/v1/messages/${encodeURIComponent(messageId)}`,
    undefined,
    signal,
  );
  // 230011: withdrawn already; 231003: not found.
  return !answer.ok && (answer.code === 230011 || answer.code === 231003)
    ? { ok: true, data: undefined, headers: new Headers() }
    : answer;
}
