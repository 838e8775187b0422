import type { ParseResult } from "../channel.ts";
import { checkedEnvelope, clip, type ChatType, type InboundEnvelope } from "../../core/envelope.ts";
import { replyToModeFor, type MattermostAccount } from "./config.ts";
import {
  jsonStringField,
  mattermostChannelTypeSchema,
  mattermostPostSchema,
  mattermostReactionSchema,
  type MattermostChannelType,
  type MattermostPost,
  type MattermostSocketPayload,
} from "./payloads.ts";

/**
 * One forwarded Mattermost WebSocket event → envelopes. Never calls Mattermost.
 * - `posted`: a user's post becomes a message (the bot's own posts and system posts are dropped);
 *   mention = Mattermost's own `data.mentions` naming the bot, `@botname` in the text, or (chatmode
 *   onchar) a trigger prefix; DMs (channel_type D) need none. Dedup key: the post id.
 * - `post_edited`, `post_deleted`, `reaction_added`, `reaction_removed`: system events from that user
 *   in that conversation — the same access policy as a message, context for the next run only —
 *   with the message's routing facts: chat type and team (which these events do not carry) from what
 *   the connector learnt of the channel.
 * Every other event (typing, status, channel_viewed, …) is not ours.
 */

export type MattermostParseInput = MattermostSocketPayload & {
  account: MattermostAccount;
  receivedAt: number;
};

export function parseMattermostEvent(input: MattermostParseInput): ParseResult {
  const { event } = input;
  switch (event.event) {
    case "posted": {
      const post = jsonStringField(event.data.post, mattermostPostSchema);
      if (!post) return { kind: "malformed", reason: "posted without a valid data.post" };
      return result(fromPost(post, input));
    }
    case "post_edited":
    case "post_deleted": {
      const post = jsonStringField(event.data.post, mattermostPostSchema);
      if (!post) return { kind: "malformed", reason: `${event.event} without a valid data.post` };
      if (post.user_id === input.self.userId)
        return dropped(`${event.event} of the bot's own post`);
      if (post.type !== "") return dropped(`${event.event} of a system post`);
      const edited = event.event === "post_edited";
      const what = edited
        ? `Mattermost message edited by ${post.user_id}: ${clip(post.message, 2000)}`
        : `Mattermost message deleted (post ${post.id}) from ${post.user_id}`;
      const stamp = edited ? `edit:${post.edit_at ?? post.create_at}` : "delete";
      return result(
        systemEvent(input, {
          post: post.id,
          channelId: post.channel_id,
          user: post.user_id,
          threadId: post.root_id || undefined,
          text: what,
          key: `${post.id}:${stamp}`,
        }),
      );
    }
    case "reaction_added":
    case "reaction_removed": {
      const reaction = jsonStringField(event.data.reaction, mattermostReactionSchema);
      if (!reaction)
        return { kind: "malformed", reason: `${event.event} without a valid data.reaction` };
      if (reaction.user_id === input.self.userId) return dropped("the bot's own reaction");
      const channelId = event.broadcast.channel_id;
      if (!channelId) return dropped(`${event.event} without broadcast.channel_id`);
      const verb = event.event === "reaction_added" ? "added" : "removed";
      return result(
        systemEvent(input, {
          post: reaction.post_id,
          channelId,
          user: reaction.user_id,
          text: `Mattermost reaction ${verb}: :${reaction.emoji_name}: by ${reaction.user_id} on post ${reaction.post_id}`,
          key: `reaction:${reaction.post_id}:${reaction.user_id}:${reaction.emoji_name}:${verb}:${reaction.create_at}`,
        }),
      );
    }
    default:
      return dropped(`event ${event.event.slice(0, 40)} is not handled`);
  }
}

function fromPost(
  post: MattermostPost,
  input: MattermostParseInput,
): { envelope: InboundEnvelope } | { dropped: string } {
  const { account, self, event } = input;
  if (post.user_id === self.userId) return { dropped: "the bot's own post" };
  if (post.type !== "") return { dropped: `system post ${post.type.slice(0, 40)}` };
  const channelType = channelTypeOf(event.data.channel_type, input.channelType);
  if (!channelType) return { dropped: "post in a channel of unknown type" };
  const chatType = chatTypeOf(channelType);
  const fromBot = post.props?.from_bot === "true" || post.props?.from_webhook === "true";

  let text = post.message;
  const mentionedNatively = mentionIds(event.data.mentions).includes(self.userId);
  const mentionPattern = new RegExp(
    `(^|[^\\w.-])@${escapeRegExp(self.username)}(?![\\w-]|\\.[\\w])`,
    "i",
  );
  const mentionedByName = mentionPattern.test(text);
  let wasMentioned = mentionedNatively || mentionedByName;
  if (mentionedByName)
    text =
      text
        .replace(new RegExp(mentionPattern.source, "gi"), "$1")
        .replace(/\s{2,}/g, " ")
        .trim() || post.message.trim();
  if (account.chatmode === "onchar" && chatType !== "direct") {
    const prefix = account.oncharPrefixes.find((candidate) => text.startsWith(candidate));
    if (prefix) {
      wasMentioned = true;
      text = text.slice(prefix.length).trim() || text;
    }
  }

  const rootId = post.root_id || undefined;
  // A mention that opens a visible thread starts that thread's session now, so the root and the
  // replies after it share one session (replyToMode first/all/batched); DMs only by replyToModeByChatType.direct.
  const mode = replyToModeFor(account, chatType);
  const opensThread = !rootId && mode !== "off" && (chatType === "direct" || wasMentioned);
  const sessionThread = rootId ?? (opensThread ? post.id : undefined);
  const sender = post.user_id;
  const senderName =
    typeof event.data.sender_name === "string"
      ? event.data.sender_name.replace(/^@/, "")
      : undefined;

  return checkedEnvelope({
    dedupKey: `mattermost:${account.accountId}:${post.id}`,
    kind: "message",
    channel: "mattermost",
    accountId: account.accountId,
    chatType,
    peerId: chatType === "direct" ? sender : post.channel_id,
    parentPeerId: sessionThread && chatType !== "direct" ? post.channel_id : undefined,
    threadId: sessionThread,
    teamId: teamOf(chatType, event.data.team_id || input.teamId),
    senderId: sender,
    senderName: senderName || undefined,
    senderIsBot: fromBot || undefined,
    messageId: post.id,
    text,
    attachments: post.file_ids?.length
      ? post.file_ids.slice(0, 8).map((id) => ({ name: `Mattermost file ${id}` }))
      : undefined,
    wasMentioned,
    receivedAt: input.receivedAt,
    route: {
      channel: "mattermost",
      accountId: account.accountId,
      to: post.channel_id,
      threadId: sessionThread,
      replyToMessageId: post.id,
      extra: { chatType, mentioned: wasMentioned ? "1" : "0", botUserId: self.userId },
    },
  });
}

function systemEvent(
  input: MattermostParseInput,
  at: {
    post: string;
    channelId: string;
    user: string;
    threadId?: string;
    text: string;
    key: string;
  },
): { envelope: InboundEnvelope } | { dropped: string } {
  const channelType = channelTypeOf(input.event.data.channel_type, input.channelType);
  // Without the conversation's type there is no policy to check it against: fail closed.
  if (!channelType) return { dropped: "event in a channel of unknown type" };
  const chatType = chatTypeOf(channelType);
  const { account } = input;
  return checkedEnvelope({
    dedupKey: `mattermost:${account.accountId}:${at.key}`,
    kind: "system",
    channel: "mattermost",
    accountId: account.accountId,
    chatType,
    peerId: chatType === "direct" ? at.user : at.channelId,
    parentPeerId: at.threadId && chatType !== "direct" ? at.channelId : undefined,
    threadId: chatType === "direct" ? undefined : at.threadId,
    // The team its messages name (bindings match on it): the event's own, else the connector's.
    teamId: teamOf(
      chatType,
      input.event.data.team_id || input.teamId || input.event.broadcast.team_id,
    ),
    senderId: at.user,
    messageId: at.post,
    text: at.text,
    receivedAt: input.receivedAt,
    route: {
      channel: "mattermost",
      accountId: account.accountId,
      to: at.channelId,
      threadId: at.threadId,
      extra: { chatType, botUserId: input.self.userId },
    },
  });
}

function channelTypeOf(
  stated: unknown,
  known: MattermostChannelType | undefined,
): MattermostChannelType | undefined {
  const parsed = mattermostChannelTypeSchema.safeParse(stated);
  return parsed.success ? parsed.data : known;
}

/** A channel's team; DMs and group messages belong to none (Mattermost sends `team_id: ""` there). */
export function teamOf(chatType: ChatType, teamId: unknown): string | undefined {
  if (chatType !== "channel") return undefined;
  return typeof teamId === "string" && teamId ? teamId : undefined;
}

export function chatTypeOf(type: MattermostChannelType): ChatType {
  return type === "D" ? "direct" : type === "G" ? "group" : "channel";
}

/** `data.mentions`: a JSON string array of the user ids the post mentions (absent when none). */
function mentionIds(value: unknown): string[] {
  if (typeof value !== "string") return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === "string") : [];
  } catch {
    return [];
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function dropped(reason: string): ParseResult {
  return { kind: "envelopes", envelopes: [], dropped: [reason] };
}

function result(parsed: { envelope: InboundEnvelope } | { dropped: string }): ParseResult {
  return "dropped" in parsed
    ? dropped(parsed.dropped)
    : { kind: "envelopes", envelopes: [parsed.envelope] };
}
