import type { OutboundMessage, SendContext } from "../adapter.ts";
import type { ChatType, ReplyRoute } from "../../core/envelope.ts";
import { replyToModeFor, slackSecrets, type SlackAccount } from "./config.ts";
import { chatTypeOf } from "./parse-context.ts";

/** The account a reply route belongs to, with its resolved bot token. */
export interface SlackSendTarget {
  account: SlackAccount;
  botToken?: string;
}

/** The account the pipeline resolved for the call (the route's), with its bot token. */
export function slackTarget(ctx: SendContext<SlackAccount>): SlackSendTarget | undefined {
  const account = ctx.account;
  return account && { account, botToken: slackSecrets(account, ctx.env).botToken };
}

export function routeChatType(route: ReplyRoute): ChatType {
  const stated = route.extra?.chatType;
  return stated === "direct" || stated === "group" || stated === "channel"
    ? stated
    : chatTypeOf(route.to, undefined);
}

/**
 * The `thread_ts` a chunk is posted with. A message that arrived in a thread is answered in that
 * thread; a top-level one is threaded per `replyToMode` (channel entry → chat type → account):
 * off = never, first = the first chunk only, all = every chunk, batched = only when the SessionDO
 * marks the run as a debounced batch (`route.extra.batched = "true"`).
 */
export function threadTsFor(
  route: ReplyRoute,
  account: SlackAccount,
  chunkIndex: number,
): string | undefined {
  if (route.threadId) return route.threadId;
  if (!route.replyToMessageId) return undefined;
  switch (replyToModeFor(account, routeChatType(route), route.to)) {
    case "off":
      return undefined;
    case "first":
      return chunkIndex === 0 ? route.replyToMessageId : undefined;
    case "all":
      return route.replyToMessageId;
    case "batched":
      return route.extra?.batched === "true" ? route.replyToMessageId : undefined;
  }
}

/** Marker carried in `chat.postMessage` metadata so `reconcile` can recognise an earlier attempt. */
export const REPLY_EVENT_TYPE = "edgeclaw_reply";

export function replyMetadata(message: OutboundMessage) {
  return { event_type: REPLY_EVENT_TYPE, event_payload: { outbox_id: message.id } };
}
