import { checkedEnvelope, clip, type ChatType, type InboundEnvelope } from "../../core/envelope.ts";
import { guildAccess } from "../../config/guild-access.ts";
import type { MsTeamsAccount } from "./config.ts";
import { activitySchema, type Activity } from "./payloads.ts";
import { parseJsonBody } from "../parse-json-body.ts";

/**
 * A verified Bot Framework activity → at most one envelope.
 *
 * - `message`: personal chats (`conversationType` personal) are direct with the user as peer; group
 *   chats and channels are groups whose peer is the conversation id without `;messageid=`. In a
 *   channel the reply goes to the thread: the root message id from `;messageid=` or `replyToId`,
 *   else the message itself (it starts a thread); `replyStyle: "top-level"` posts beside it.
 * - A mention is a `mention` entity naming the bot (`recipient.id`); its `<at>…</at>` text is cut.
 * - conversationUpdate (members added/removed, installs), messageUpdate, messageDelete,
 *   messageReaction and invoke (adaptive card actions, file consent) are system events: the same
 *   access checks as a message from that user there, and never start a run. They are placed by the
 *   message's own rules (placeOf): the same chat type, peer and team, so a channel's
 *   `teams.<team>.channels.<channel>` rules judge its reactions and clicks as they judge its messages.
 * - The sender is the AAD object id when present (stable; what allowFrom should list), else the
 *   Bot Framework id `29:…`. Dedup key: account, conversation id and activity id.
 * - The bot's own activities and other bots (unless allowBots) are dropped.
 * - Only Teams itself is served: the Bot Framework posts every channel of the Azure Bot (Web Chat,
 *   Direct Line, …) to the same endpoint with a token that passes every check, and there the client
 *   picks `from.id` / `aadObjectId` itself, so anything whose `channelId` is not "msteams" is
 *   dropped (200, nothing stored). With a SingleTenant app (a `tenantId` configured), an activity
 *   naming another tenant, or none, is dropped the same way.
 */

export type MsTeamsParseResult =
  | { envelope: InboundEnvelope; invoke?: string }
  | { dropped: string; invoke?: string }
  | { malformed: string };

export function parseTeamsActivity(
  raw: Uint8Array,
  account: MsTeamsAccount,
  receivedAt: number,
  requiredTenant?: string,
): MsTeamsParseResult {
  const parsed = parseJsonBody(raw, activitySchema, "a Bot Framework activity");
  if (!parsed.ok) return { malformed: parsed.reason };
  const activity = parsed.value;
  const refused = notFromTeams(activity, requiredTenant);
  if (refused) return { dropped: refused };
  if (activity.from.id === activity.recipient.id) return { dropped: "the bot's own activity" };
  const who = person(activity);
  switch (activity.type) {
    case "message":
      return fromMessage(activity, account, receivedAt);
    case "conversationUpdate": {
      const added = (activity.membersAdded ?? []).map((m) =>
        m.id === activity.recipient.id ? "the bot" : (m.name ?? m.id),
      );
      const removed = (activity.membersRemoved ?? []).map((m) =>
        m.id === activity.recipient.id ? "the bot" : (m.name ?? m.id),
      );
      const what = [
        added.length ? `added ${added.join(", ")}` : "",
        removed.length ? `removed ${removed.join(", ")}` : "",
      ]
        .filter(Boolean)
        .join("; ");
      return system(
        activity,
        account,
        receivedAt,
        `Microsoft Teams: ${who} ${clip(what || `updated the conversation (${activity.channelData?.eventType ?? "update"})`, 400)}`,
      );
    }
    case "messageUpdate":
      return system(
        activity,
        account,
        receivedAt,
        `Microsoft Teams: ${who} edited a message: ${clip(cleanText(activity.text ?? ""), 400)}`,
      );
    case "messageDelete":
      return system(activity, account, receivedAt, `Microsoft Teams: ${who} deleted a message`);
    case "messageReaction": {
      const added = (activity.reactionsAdded ?? []).map((r) => r.type);
      const removed = (activity.reactionsRemoved ?? []).map((r) => r.type);
      return system(
        activity,
        account,
        receivedAt,
        `Microsoft Teams: ${who} ${added.length ? `reacted ${clip(added.join(","), 100)}` : `removed reaction ${clip(removed.join(","), 100)}`}`,
      );
    }
    case "invoke": {
      const name = activity.name ?? "invoke";
      const value =
        activity.value === undefined ? "" : ` value=${clip(JSON.stringify(activity.value), 300)}`;
      const result = system(
        activity,
        account,
        receivedAt,
        `Microsoft Teams: ${who} sent ${clip(name, 100)}${value}`,
      );
      return { ...result, invoke: name } as MsTeamsParseResult;
    }
    default:
      return { dropped: `unsupported activity type ${clip(activity.type, 40)}` };
  }
}

/** Why an activity is not a Teams activity of the configured tenant, or undefined when it is. */
function notFromTeams(activity: Activity, requiredTenant: string | undefined): string | undefined {
  if (activity.channelId !== MSTEAMS_CHANNEL_ID)
    return `Bot Framework channel ${clip(activity.channelId ?? "(none)", 40)} is not served (only msteams)`;
  if (requiredTenant === undefined) return undefined;
  const tenant = activity.channelData?.tenant?.id ?? activity.conversation.tenantId;
  if (tenant !== requiredTenant)
    return `activity of tenant ${clip(tenant ?? "(none)", 64)} refused: channels.msteams.tenantId is another`;
  return undefined;
}

/** The Bot Framework's channel id for Microsoft Teams (Activity.channelId). */
export const MSTEAMS_CHANNEL_ID = "msteams";

function person(activity: Activity): string {
  return activity.from.name ? `${activity.from.name} (${senderId(activity)})` : senderId(activity);
}

function senderId(activity: Activity): string {
  return activity.from.aadObjectId ?? activity.from.id;
}

function isDirect(activity: Activity): boolean {
  return (
    activity.conversation.conversationType === "personal" ||
    (activity.conversation.conversationType === undefined && activity.conversation.isGroup !== true)
  );
}

/** The conversation id without `;messageid=…` and the thread root it names. */
export function splitConversationId(id: string): { base: string; messageId?: string } {
  const match = /^(.*?);messageid=(.+)$/i.exec(id);
  return match ? { base: match[1]!, messageId: match[2]! } : { base: id };
}

/**
 * Where an activity happened, read the same way for a message and for every system event (the
 * access check and routing read these): chat type, the conversation (the user in a 1:1 chat, else
 * the conversation id without `;messageid=`), the thread root that id names, and the team — which
 * Teams puts in `channelData.team` on every activity of a channel, reactions and clicks included.
 */
interface Place {
  chatType: ChatType;
  base: string;
  messageId?: string;
  peerId: string;
  teamId?: string;
}

function placeOf(activity: Activity): Place {
  const direct = isDirect(activity);
  const { base, messageId } = splitConversationId(activity.conversation.id);
  const chatType: ChatType = direct
    ? "direct"
    : activity.conversation.conversationType === "channel"
      ? "channel"
      : "group";
  const teamId = activity.channelData?.team?.id;
  return {
    chatType,
    base,
    ...(messageId ? { messageId } : {}),
    peerId: direct ? senderId(activity) : base,
    ...(teamId ? { teamId } : {}),
  };
}

/** Another bot: its role says so, or its Bot Framework id (`28:` is a bot's, `29:` a user's). */
function fromBot(activity: Activity): boolean {
  return activity.from.role === "bot" || activity.from.id.startsWith("28:");
}

function fromMessage(
  activity: Activity,
  account: MsTeamsAccount,
  receivedAt: number,
): MsTeamsParseResult {
  if (!activity.id) return { malformed: "message without an id" };
  const mentions = (activity.entities ?? []).filter(
    (e) => e.type === "mention" && e.mentioned?.id === activity.recipient.id,
  );
  let text = activity.text ?? "";
  for (const mention of mentions) if (mention.text) text = text.split(mention.text).join(" ");
  text = cleanText(text);
  const attachments = (activity.attachments ?? [])
    .filter((a) => a.contentType !== "text/html")
    .slice(0, 20)
    .map(attachmentOf);
  if (!text && !attachments.length) return { dropped: "message without text or attachments" };
  const place = placeOf(activity);
  const { base, chatType, teamId } = place;
  const threadRoot =
    chatType === "channel" && replyStyleFor(account, teamId, base) === "thread"
      ? (place.messageId ?? activity.replyToId ?? activity.id)
      : undefined;
  return checkedEnvelope({
    dedupKey: `msteams:${account.accountId}:${base}:${activity.id}`,
    kind: "message",
    channel: "msteams",
    accountId: account.accountId,
    chatType,
    peerId: place.peerId,
    ...(teamId ? { teamId } : {}),
    senderId: senderId(activity),
    senderName: activity.from.name,
    senderIsBot: fromBot(activity),
    messageId: activity.id,
    text: text || `[${attachments.length} attachment${attachments.length === 1 ? "" : "s"}]`,
    ...(attachments.length ? { attachments } : {}),
    wasMentioned: mentions.length > 0,
    receivedAt,
    route: {
      channel: "msteams",
      accountId: account.accountId,
      to: base,
      ...(threadRoot ? { threadId: threadRoot } : {}),
      replyToMessageId: activity.id,
      extra: routeExtra(activity, place),
    },
  });
}

function routeExtra(activity: Activity, place: Place): Record<string, string> {
  return {
    serviceUrl: activity.serviceUrl,
    conversationType:
      place.chatType === "direct"
        ? "personal"
        : place.chatType === "channel"
          ? "channel"
          : "groupChat",
    ...(place.teamId ? { teamId: place.teamId } : {}),
  };
}

/**
 * Where a channel reply goes, first set wins (channels/msteams "Reply style"):
 * `teams.<team>.channels.<channel>.replyStyle` → `teams.<team>.replyStyle` → the account's
 * `replyStyle` → implied by the mention rule in force there (requireMention → "thread", else
 * "top-level"), whose own order is channel → team → `groups` entry → account.
 */
export function replyStyleFor(
  account: MsTeamsAccount,
  teamId: string | undefined,
  channelId: string,
): "thread" | "top-level" {
  const place = guildAccess({ teams: account.teams }, account.accountId, {
    teamId,
    peerId: channelId,
  });
  const entry = (place.configured ? place.entry : undefined) as
    | { replyStyle?: "thread" | "top-level"; requireMention?: boolean }
    | undefined;
  if (entry?.replyStyle) return entry.replyStyle;
  if (account.replyStyle) return account.replyStyle;
  const group = account.groups?.[channelId] ?? account.groups?.["*"];
  const requireMention = entry?.requireMention ?? group?.requireMention ?? account.requireMention;
  return requireMention ? "thread" : "top-level";
}

/**
 * A personal-chat file (`…teams.file.download.info`) is fetched from its pre-authenticated
 * `content.downloadUrl` and typed by its name; anything else (pasted images, cards with a link) from
 * `contentUrl`. files.ts decides which hosts are fetched and where the bot's token may go.
 */
function attachmentOf(attachment: NonNullable<Activity["attachments"]>[number]) {
  const name = attachment.name ?? "attachment";
  if (attachment.contentType === FILE_DOWNLOAD_INFO) {
    const content = attachment.content as { downloadUrl?: unknown } | undefined;
    const url =
      typeof content?.downloadUrl === "string" ? content.downloadUrl : attachment.contentUrl;
    return { name, ...(url ? { url } : {}) };
  }
  return {
    name,
    mimeType: attachment.contentType,
    ...(attachment.contentUrl ? { url: attachment.contentUrl } : {}),
  };
}

const FILE_DOWNLOAD_INFO = "application/vnd.microsoft.teams.file.download.info";

function system(
  activity: Activity,
  account: MsTeamsAccount,
  receivedAt: number,
  text: string,
): MsTeamsParseResult {
  const place = placeOf(activity);
  const eventId = activity.id ?? `${activity.type}:${activity.timestamp ?? receivedAt}`;
  return checkedEnvelope({
    dedupKey: `msteams:${account.accountId}:${place.base}:${activity.type}:${eventId}`,
    kind: "system",
    channel: "msteams",
    accountId: account.accountId,
    chatType: place.chatType,
    peerId: place.peerId,
    // The team/channel allowlist (`teams.<team>.channels.<channel>`) is found by the team: without
    // it a channel's reactions and clicks would be judged by the flat `groups` map instead.
    ...(place.teamId ? { teamId: place.teamId } : {}),
    senderId: senderId(activity),
    senderName: activity.from.name,
    senderIsBot: fromBot(activity),
    text,
    receivedAt,
    route: {
      channel: "msteams",
      accountId: account.accountId,
      to: place.base,
      extra: routeExtra(activity, place),
    },
  });
}

/** Teams text may carry HTML (channels) and `<at>` tags: plain text for the model. */
function cleanText(text: string): string {
  return text
    .replace(/<at>[^<]*<\/at>/gi, " ")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>\s*<p>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/[ \t]+/g, " ")
    .trim();
}
