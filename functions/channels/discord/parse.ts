import type { ParseResult } from "../channel.ts";
import {
  checkedEnvelope,
  type InboundAttachment,
  type InboundEnvelope,
  type InboundEnvelopeInput,
} from "../../core/envelope.ts";
import { guildAccess } from "../../config/guild-access.ts";
import type { DiscordAccount } from "./config.ts";
import {
  discordDispatchSchema,
  discordMemberAddSchema,
  discordMessageSchema,
  discordMessageUpdateSchema,
  discordReactionSchema,
  GROUP_DM_CHANNEL_TYPE,
  THREAD_CHANNEL_TYPES,
  type DiscordDispatch,
  type DiscordMessage,
  type DiscordUser,
} from "./payloads.ts";
import { parsePayload } from "../parse-json-body.ts";

/**
 * One Gateway dispatch `{ op: 0, t, s, d }` (as the companion forwarded it) → at most one envelope.
 * Pure: no REST call.
 *
 * - MESSAGE_CREATE → a message. No `guild_id` = a DM (peer = the author; replies go to the DM
 *   channel). In a guild the channel is the peer; a thread is a conversation of its own (peer = the
 *   thread, parent = its channel, whose guild entry it falls back to), as the seed says.
 * - MESSAGE_UPDATE (a real edit: author and `edited_timestamp`), MESSAGE_REACTION_ADD and
 *   GUILD_MEMBER_ADD → system events: the same access policy as a message from that sender there,
 *   and they never start a run by themselves (routing/access.ts, triage).
 * - The bot's own messages (and edits/reactions) are dropped here; other bots carry `senderIsBot`
 *   and are dropped by access unless `allowBots`.
 * - The sender's guild roles (`member.roles`) ride along as `senderRoles` (role allowlists, role bindings).
 * - Mentions: `<@bot>` in `mentions`, a role Discord manages for the bot (`context.botRoleIds`) in
 *   `mention_roles`, or a reply to one of the bot's messages. `@everyone` is not a mention of the bot.
 * - Dedup keys per bot: `discord:<bot>:msg:<id>`; an edit `…:edit:<edited_timestamp>` (each edit once);
 *   a reaction `…:react:<message>:<user>:<emoji>`; a join `…:join:<guild>:<user>:<joined_at>`.
 */

export interface DiscordParseContext {
  account: DiscordAccount;
  /** The bot's user id (from its token or applicationId); without it nothing counts as a mention. */
  botUserId?: string;
  receivedAt: number;
}

type One = { envelope: InboundEnvelope } | { dropped: string };

export function parseDiscordDispatch(payload: unknown, ctx: DiscordParseContext): ParseResult {
  const dispatch = parsePayload(
    payload,
    discordDispatchSchema,
    "a Gateway dispatch ({op:0,t,s,d})",
  );
  if (!dispatch.ok) return { kind: "malformed", reason: dispatch.reason };
  const one = parseOne(dispatch.value, ctx);
  if ("malformed" in one) return { kind: "malformed", reason: one.malformed };
  return "dropped" in one
    ? { kind: "envelopes", envelopes: [], dropped: [one.dropped] }
    : { kind: "envelopes", envelopes: [one.envelope] };
}

function parseOne(
  dispatch: DiscordDispatch,
  ctx: DiscordParseContext,
): One | { malformed: string } {
  switch (dispatch.t) {
    case "MESSAGE_CREATE": {
      const message = discordMessageSchema.safeParse(dispatch.d);
      return message.success
        ? fromMessage(message.data, dispatch, ctx)
        : { malformed: "MESSAGE_CREATE: not a Discord message" };
    }
    case "MESSAGE_UPDATE": {
      const update = discordMessageUpdateSchema.safeParse(dispatch.d);
      return update.success
        ? fromEdit(update.data, dispatch, ctx)
        : { malformed: "MESSAGE_UPDATE: not a Discord message" };
    }
    case "MESSAGE_REACTION_ADD": {
      const reaction = discordReactionSchema.safeParse(dispatch.d);
      return reaction.success
        ? fromReaction(reaction.data, dispatch, ctx)
        : { malformed: "MESSAGE_REACTION_ADD: not a reaction" };
    }
    case "GUILD_MEMBER_ADD": {
      const member = discordMemberAddSchema.safeParse(dispatch.d);
      return member.success
        ? fromMemberAdd(member.data, ctx)
        : { malformed: "GUILD_MEMBER_ADD: not a member" };
    }
    default:
      return { dropped: `dispatch ${dispatch.t} is not handled` };
  }
}

const botKey = (ctx: DiscordParseContext) =>
  ctx.botUserId ? `bot${ctx.botUserId}` : `acct:${ctx.account.accountId}`;
const displayName = (user: DiscordUser, nick?: string | null) =>
  nick ?? user.global_name ?? user.username;

/** Where a message in `channelId` lives: DM, guild channel, or thread (with its parent). */
function conversation(
  channelId: string,
  guildId: string | undefined,
  dispatch: DiscordDispatch,
  senderId: string,
) {
  const known = dispatch.context?.channel?.id === channelId ? dispatch.context.channel : undefined;
  if (!guildId)
    return {
      chatType: "direct" as const,
      peerId: senderId,
      groupDm: known?.type === GROUP_DM_CHANNEL_TYPE,
    };
  const parent =
    known && THREAD_CHANNEL_TYPES.has(known.type) ? (known.parent_id ?? undefined) : undefined;
  return {
    chatType: "channel" as const,
    peerId: channelId,
    parentPeerId: parent,
    teamId: guildId,
    groupDm: false,
  };
}

function fromMessage(
  message: DiscordMessage,
  dispatch: DiscordDispatch,
  ctx: DiscordParseContext,
): One {
  if (ctx.botUserId && message.author.id === ctx.botUserId)
    return { dropped: "the bot's own message" };
  if (message.type !== 0 && message.type !== 19)
    return { dropped: `message type ${message.type} is not a chat message` };
  if (message.author.system) return { dropped: "a Discord system message" };
  const where = conversation(message.channel_id, message.guild_id, dispatch, message.author.id);
  const closed = closedConversation(ctx, where);
  if (closed) return { dropped: closed };

  const nativeMention =
    ctx.botUserId !== undefined && message.mentions.some((user) => user.id === ctx.botUserId);
  const roleMention = (dispatch.context?.botRoleIds ?? []).some((role) =>
    message.mention_roles.includes(role),
  );
  const replyToBot =
    ctx.botUserId !== undefined && message.referenced_message?.author?.id === ctx.botUserId;
  const wasMentioned = nativeMention || roleMention || replyToBot;
  if (
    where.chatType === "channel" &&
    !wasMentioned &&
    ignoresOtherMentions(ctx, where) &&
    (message.mentions.length > 0 || message.mention_roles.length > 0)
  ) {
    return { dropped: "mentions someone else, not the bot (ignoreOtherMentions)" };
  }
  const attachments: InboundAttachment[] = message.attachments.slice(0, 32).map((file) => ({
    name: file.filename,
    ...(file.content_type ? { mimeType: file.content_type } : {}),
    sizeBytes: file.size,
    url: file.url,
  }));
  return build(
    {
      dedupKey: `discord:${botKey(ctx)}:msg:${message.id}`,
      kind: "message",
      senderId: message.author.id,
      senderName: displayName(message.author, message.member?.nick),
      senderIsBot:
        message.author.bot === true || message.webhook_id !== undefined ? true : undefined,
      ...(message.member?.roles?.length ? { senderRoles: message.member.roles.slice(0, 250) } : {}),
      messageId: message.id,
      text: message.content,
      ...(attachments.length ? { attachments } : {}),
      wasMentioned,
    },
    where,
    message.channel_id,
    message.id,
    ctx,
  );
}

function fromEdit(
  update: ReturnType<typeof discordMessageUpdateSchema.parse>,
  dispatch: DiscordDispatch,
  ctx: DiscordParseContext,
): One {
  if (!update.author || !update.edited_timestamp)
    return { dropped: "MESSAGE_UPDATE without an edit (embed unfurl)" };
  if (ctx.botUserId && update.author.id === ctx.botUserId)
    return { dropped: "an edit of the bot's own message" };
  const where = conversation(update.channel_id, update.guild_id, dispatch, update.author.id);
  const closed = closedConversation(ctx, where);
  if (closed) return { dropped: closed };
  return build(
    {
      dedupKey: `discord:${botKey(ctx)}:msg:${update.id}:edit:${update.edited_timestamp}`,
      kind: "system",
      senderId: update.author.id,
      senderName: displayName(update.author, update.member?.nick),
      senderIsBot: update.author.bot === true ? true : undefined,
      ...(update.member?.roles?.length ? { senderRoles: update.member.roles.slice(0, 250) } : {}),
      messageId: update.id,
      text: `Message ${update.id} was edited: ${update.content ?? ""}`,
    },
    where,
    update.channel_id,
    update.id,
    ctx,
  );
}

function fromReaction(
  reaction: ReturnType<typeof discordReactionSchema.parse>,
  dispatch: DiscordDispatch,
  ctx: DiscordParseContext,
): One {
  if (ctx.botUserId && reaction.user_id === ctx.botUserId)
    return { dropped: "the bot's own reaction" };
  const mode = reactionMode(ctx, reaction.guild_id);
  if (mode === "off") return { dropped: "reactionNotifications off" };
  if (mode === "own" && (!ctx.botUserId || reaction.message_author_id !== ctx.botUserId))
    return { dropped: "reaction to a message that is not the bot's (reactionNotifications own)" };
  const emoji = reaction.emoji.id
    ? `${reaction.emoji.name ?? ""}:${reaction.emoji.id}`
    : (reaction.emoji.name ?? "?");
  const where = conversation(reaction.channel_id, reaction.guild_id, dispatch, reaction.user_id);
  const closed = closedConversation(ctx, where);
  if (closed) return { dropped: closed };
  const user = reaction.member?.user;
  return build(
    {
      dedupKey:
        `discord:${botKey(ctx)}:react:${reaction.message_id}:${reaction.user_id}:${emoji}`.slice(
          0,
          512,
        ),
      kind: "system",
      senderId: reaction.user_id,
      ...(user ? { senderName: displayName(user, reaction.member?.nick) } : {}),
      senderIsBot: user?.bot === true ? true : undefined,
      ...(reaction.member?.roles?.length
        ? { senderRoles: reaction.member.roles.slice(0, 250) }
        : {}),
      messageId: reaction.message_id,
      text: `Reaction ${emoji} added to message ${reaction.message_id}`,
    },
    where,
    reaction.channel_id,
    reaction.message_id,
    ctx,
  );
}

function fromMemberAdd(
  member: ReturnType<typeof discordMemberAddSchema.parse>,
  ctx: DiscordParseContext,
): One {
  if (ctx.botUserId && member.user.id === ctx.botUserId)
    return { dropped: "the bot itself joined" };
  // A join belongs to the guild, not a channel: the guild is the conversation (its entry, not a channel's).
  return build(
    {
      dedupKey: `discord:${botKey(ctx)}:join:${member.guild_id}:${member.user.id}:${member.joined_at ?? ""}`,
      kind: "system",
      senderId: member.user.id,
      senderName: displayName(member.user, member.nick),
      senderIsBot: member.user.bot === true ? true : undefined,
      text: `${displayName(member.user, member.nick)} (${member.user.id}) joined the server`,
    },
    {
      chatType: "channel",
      peerId: member.guild_id,
      parentPeerId: undefined,
      teamId: member.guild_id,
      groupDm: false,
    },
    member.guild_id,
    undefined,
    ctx,
  );
}

type Where = ReturnType<typeof conversation>;

function build(
  fields: Omit<
    InboundEnvelopeInput,
    "channel" | "accountId" | "chatType" | "peerId" | "receivedAt" | "route"
  >,
  where: Where,
  replyChannelId: string,
  replyToMessageId: string | undefined,
  ctx: DiscordParseContext,
): One {
  return checkedEnvelope({
    ...fields,
    channel: "discord",
    accountId: ctx.account.accountId,
    chatType: where.chatType,
    peerId: where.peerId,
    ...("parentPeerId" in where && where.parentPeerId ? { parentPeerId: where.parentPeerId } : {}),
    ...("teamId" in where && where.teamId ? { teamId: where.teamId } : {}),
    receivedAt: ctx.receivedAt,
    route: {
      channel: "discord",
      accountId: ctx.account.accountId,
      to: replyChannelId,
      ...(replyToMessageId ? { replyToMessageId } : {}),
      // The guild (and a thread's channel) let run-time policy find this conversation's entry (tools).
      ...("teamId" in where && where.teamId
        ? {
            extra: {
              teamId: where.teamId,
              ...(where.parentPeerId ? { parentPeerId: where.parentPeerId } : {}),
            },
          }
        : {}),
    },
  });
}

/**
 * Why the account takes nothing from this conversation before any access check: a group DM while
 * `dm.groupEnabled` is off (the default), a DM while `dm.enabled` is false. Messages, edits and
 * reactions alike (interactions.ts asks too): a closed conversation has no side door.
 */
export function closedConversation(
  ctx: { account: DiscordAccount },
  where: { chatType: "direct" | "channel"; groupDm: boolean },
): string | undefined {
  if (where.groupDm && !ctx.account.dm.groupEnabled) return "group DMs are off (dm.groupEnabled)";
  if (where.chatType === "direct" && ctx.account.dm.enabled === false)
    return "DMs are off (dm.enabled)";
  return undefined;
}

function ignoresOtherMentions(ctx: DiscordParseContext, where: Where): boolean {
  const access = guildAccess({ guilds: ctx.account.guilds }, ctx.account.accountId, where);
  const entry = access.configured
    ? (access.entry as { ignoreOtherMentions?: boolean } | undefined)
    : undefined;
  return entry?.ignoreOtherMentions ?? false;
}

function reactionMode(
  ctx: DiscordParseContext,
  guildId: string | undefined,
): "off" | "own" | "all" | "allowlist" {
  const guild = guildId ? (ctx.account.guilds?.[guildId] ?? ctx.account.guilds?.["*"]) : undefined;
  return guild?.reactionNotifications ?? ctx.account.reactionNotifications;
}
