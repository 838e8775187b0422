import {
  checkedEnvelope,
  clip,
  type ChatType,
  type InboundEnvelope,
  type InboundEnvelopeInput,
} from "../../core/envelope.ts";
import { withTrailingSlash, type GoogleChatAccount } from "./config.ts";
import { chatEventSchema, type ChatEvent, type ChatMessage } from "./payloads.ts";
import { parseJsonBody } from "../parse-json-body.ts";

/**
 * A verified Google Chat interaction event → at most one envelope.
 *
 * - MESSAGE is a message; its dedup key is the message resource name (`spaces/…/messages/…`),
 *   which Google keeps when it sends the event again.
 * - ADDED_TO_SPACE, REMOVED_FROM_SPACE and CARD_CLICKED are system events: they pass the same
 *   access checks as a message from that user in that space and only ever become context. Their key
 *   is the event type, space, user and event time. Other event types are acknowledged and dropped.
 * - A DM (`spaceType` DIRECT_MESSAGE, or the older `type: "DM"`) is direct, with the user as peer;
 *   any other space is a group whose session is the space, while the reply goes to the message's
 *   thread (`route.threadId` = `thread.name`).
 * - A mention is a USER_MENTION annotation of `botUser` (or, with no `botUser` set, of any bot
 *   user: in an app's own event that is the app); Google's `argumentText` is the text without it.
 */

export type GoogleChatParseResult =
  | { envelope: InboundEnvelope }
  | { dropped: string }
  | { malformed: string };

export function parseGoogleChatEvent(
  raw: Uint8Array,
  account: GoogleChatAccount,
  receivedAt: number,
): GoogleChatParseResult {
  const parsed = parseJsonBody(raw, chatEventSchema, "a Google Chat event");
  if (!parsed.ok) return { malformed: parsed.reason };
  const event = parsed.value;
  switch (event.type) {
    case "MESSAGE":
      return event.message
        ? fromMessage(event, event.message, account, receivedAt)
        : { malformed: "MESSAGE event without a message" };
    case "ADDED_TO_SPACE":
      return system(
        event,
        account,
        receivedAt,
        (who) => `Google Chat: ${who} added the app to this ${noun(event)}`,
      );
    case "REMOVED_FROM_SPACE":
      return system(
        event,
        account,
        receivedAt,
        (who) => `Google Chat: ${who} removed the app from this ${noun(event)}`,
      );
    case "CARD_CLICKED": {
      const method = event.action?.actionMethodName ?? event.common?.invokedFunction ?? "a button";
      const params = event.action?.parameters?.length
        ? ` parameters=${clip(JSON.stringify(event.action.parameters), 300)}`
        : "";
      return system(
        event,
        account,
        receivedAt,
        (who) => `Google Chat: ${who} clicked ${clip(method, 100)}${params}`,
      );
    }
    default:
      return { dropped: `unsupported event type ${clip(event.type, 40)}` };
  }
}

function isDirect(event: ChatEvent): boolean {
  return (
    event.space.spaceType === "DIRECT_MESSAGE" ||
    event.space.type === "DM" ||
    event.space.singleUserBotDm === true
  );
}

function noun(event: ChatEvent): string {
  return isDirect(event) ? "direct message" : "space";
}

function fromMessage(
  event: ChatEvent,
  message: ChatMessage,
  account: GoogleChatAccount,
  receivedAt: number,
): GoogleChatParseResult {
  const direct = isDirect(event);
  const mentioned = (message.annotations ?? []).some(
    (annotation) =>
      annotation.type === "USER_MENTION" &&
      annotation.userMention !== undefined &&
      (account.botUser
        ? annotation.userMention.user.name === account.botUser
        : annotation.userMention.user.type === "BOT"),
  );
  const text = (
    mentioned && message.argumentText !== undefined ? message.argumentText : (message.text ?? "")
  ).trim();
  const attachments = describeAttachments(message, account);
  if (!text && !attachments.length) return { dropped: "message without text or attachments" };
  const chatType: ChatType = direct ? "direct" : "group";
  return checkedEnvelope({
    dedupKey: `googlechat:${account.accountId}:${message.name}`,
    kind: "message",
    channel: "googlechat",
    accountId: account.accountId,
    chatType,
    peerId: direct ? message.sender.name : event.space.name,
    senderId: message.sender.name,
    senderName: message.sender.displayName,
    senderIsBot: message.sender.type === "BOT",
    messageId: message.name,
    text: text || `[${attachments.length} attachment${attachments.length === 1 ? "" : "s"}]`,
    ...(attachments.length ? { attachments } : {}),
    wasMentioned: mentioned,
    receivedAt,
    route: {
      channel: "googlechat",
      accountId: account.accountId,
      to: event.space.name,
      // Spaces answer in the message's thread; a DM has one conversation.
      ...(!direct && message.thread?.name ? { threadId: message.thread.name } : {}),
      replyToMessageId: message.name,
    },
  });
}

function describeAttachments(
  message: ChatMessage,
  account: GoogleChatAccount,
): NonNullable<InboundEnvelopeInput["attachments"]> {
  return (message.attachment ?? []).slice(0, 20).map((attachment) => {
    const resource = attachment.attachmentDataRef?.resourceName;
    return {
      name: attachment.contentName ?? "attachment",
      mimeType: attachment.contentType,
      // Uploaded files come through the media API with the app's token; Drive files need user auth.
      url: resource
        ? `${withTrailingSlash(account.apiBaseUrl)}v1/media/${encodeURIComponent(resource)}?alt=media`
        : undefined,
    };
  });
}

function system(
  event: ChatEvent,
  account: GoogleChatAccount,
  receivedAt: number,
  describe: (who: string) => string,
): GoogleChatParseResult {
  const user = event.user;
  if (!user) return { dropped: `${event.type} without a user` };
  const direct = isDirect(event);
  return checkedEnvelope({
    dedupKey: `googlechat:${account.accountId}:${event.type}:${event.space.name}:${user.name}:${event.eventTime ?? receivedAt}`,
    kind: "system",
    channel: "googlechat",
    accountId: account.accountId,
    chatType: direct ? "direct" : "group",
    peerId: direct ? user.name : event.space.name,
    senderId: user.name,
    senderName: user.displayName,
    senderIsBot: user.type === "BOT",
    text: describe(user.displayName ? `${user.displayName} (${user.name})` : user.name),
    receivedAt,
    route: { channel: "googlechat", accountId: account.accountId, to: event.space.name },
  });
}
