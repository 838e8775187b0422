import type { SendContext } from "../adapter.ts";
import type { ReplyRoute } from "../../core/envelope.ts";
import { telegramSecrets, type TelegramAccount } from "./config.ts";

/** The account a reply route belongs to, with its resolved bot token. */
export interface TelegramTarget {
  account: TelegramAccount;
  botToken?: string;
}

/** The account the pipeline resolved for the call (the route's), with its bot token. */
export function telegramTarget(ctx: SendContext<TelegramAccount>): TelegramTarget | undefined {
  const account = ctx.account;
  return account && { account, botToken: telegramSecrets(account, ctx.env).botToken };
}

/**
 * `message_thread_id` for a send. Forum topics and DM threads are answered in their thread, except
 * the forum's General topic (id 1): Telegram refuses `sendMessage(message_thread_id=1)` with
 * "thread not found", so messages go there without it. Chat actions (typing) keep it: the typing
 * indicator shows in General only with the id.
 */
export function threadParams(
  route: ReplyRoute,
  purpose: "message" | "action",
): { message_thread_id?: number } {
  const thread = Number(route.threadId);
  if (!route.threadId || !Number.isSafeInteger(thread)) return {};
  if (purpose === "message" && thread === 1 && route.extra?.forum === "1") return {};
  return { message_thread_id: thread };
}

/**
 * `reply_parameters` for chunk `chunkIndex` under `replyToMode` (default off): first = the first
 * chunk quotes the user's message, all = every chunk, batched = only runs the SessionDO marks as a
 * debounced batch. `allow_sending_without_reply`: a deleted original never blocks the answer.
 */
export function replyParams(
  route: ReplyRoute,
  account: TelegramAccount,
  chunkIndex: number,
): { reply_parameters?: { message_id: number; allow_sending_without_reply: true } } {
  const id = Number(route.replyToMessageId);
  if (!route.replyToMessageId || !Number.isSafeInteger(id)) return {};
  const quote = {
    reply_parameters: { message_id: id, allow_sending_without_reply: true as const },
  };
  switch (account.replyToMode) {
    case "off":
      return {};
    case "first":
      return chunkIndex === 0 ? quote : {};
    case "all":
      return quote;
    case "batched":
      return route.extra?.batched === "true" ? quote : {};
  }
}
