import type { InboundEnvelope } from "../core/envelope.ts";
import { channelDefinition } from "../channels/registry.ts";
import * as z from "zod";
import {
  effectiveChannelAccess,
  groupEntrySchema,
  type EffectiveChannelAccess,
  type GroupEntry,
} from "../config/channel-access.ts";
import { guildAccess } from "../config/guild-access.ts";
import type { EdgeclawConfig } from "../config/schema.ts";
import { isCommandLike } from "../commands/parse.ts";
import type { AccessStore } from "./access-store.ts";
import { matchAllowList } from "./allowlist.ts";
import { normalizeAccountId, normalizeToken } from "./ids.ts";
import { wasMentioned } from "./mention.ts";
import { commandAllowFromDecision, isOwner } from "./owner.ts";
import {
  generatePairingCode,
  PAIRING_CODE_TTL_MS,
  PAIRING_MAX_PENDING_PER_ACCOUNT,
} from "./pairing-code.ts";
import { pairingReplyText } from "./pairing.ts";

/**
 * decideAccess(input) — may this inbound message reach the agent?
 *
 * Integration contract: run inside the SessionDO after the event is stored (NOT on the ack hot
 * path; it reads Postgres through `store`). Only for chat-platform envelopes: surfaces already
 * authenticated by the gateway token (web chat, OpenAI API) use `OPERATOR_ACCESS` instead.
 *
 *   { kind: "allow", senderIsOwner, commandAuthorized }  run it (commands go through functions/commands)
 *   { kind: "pairing", replyText }   send replyText once through the outbox; never reaches the model
 *   { kind: "history-only" }         unmentioned group message: buffer it (group-history.ts), no run
 *   { kind: "drop", reason }         nothing is sent; reason is for logs
 *
 * Pairing: an unknown DM sender under dmPolicy "pairing" gets ONE code. A repeat message (or a
 * duplicate delivery) while that code is pending stays silent (`drop`, "pairing pending"): the
 * pairing doc says the bot only messages when it creates a new request, about once an hour per
 * sender. After expiry the next message mints a new code. A 4th pending sender on one channel
 * account is ignored until a slot frees. A retry of the very event that created the request (the
 * SessionDO stopped between the Postgres insert and storing the reply) gets the existing code
 * again: the request remembers that event's dedup key, so the reply is derivable, not lost.
 *
 * Groups, in OpenClaw's order: groupPolicy (disabled → drop) → group allowlist (`groups` /
 * Slack-style `channels` map — the account's own when it sets one — `"*"` = all) and sender
 * allowlist (per-group `users`, else `groupAllowFrom`, else `allowFrom` when no group map exists and
 * the channel documents that fallback (ChannelDefinition.groupSendersFallBackToAllowFrom); pairing
 * approvals never count in groups) → mention gating (`requireMention`, default true; a native mention, a mention pattern or
 * a command counts) → otherwise history-only.
 *
 * System events (edits, deletes, reactions, joins/leaves, renames, pins, button clicks) pass the
 * same channel, DM, group and sender checks as a message from that sender in that conversation —
 * nobody gets in through a side door. They differ in two ways: a denied one is always a silent
 * `drop` (it never mints a pairing code: a stranger's reaction must not make the bot speak), and
 * mention gating does not apply (an allowed one only becomes context for the session's next run,
 * it never starts a run by itself; triage.ts).
 */
export type AccessDecision =
  | { kind: "allow"; senderIsOwner: boolean; commandAuthorized: boolean }
  | { kind: "pairing"; replyText: string }
  | { kind: "history-only" }
  | { kind: "drop"; reason: string; configKey?: string };

export interface AccessInput {
  config: EdgeclawConfig;
  envelope: InboundEnvelope;
  store: AccessStore;
  now: number;
  /** The routed agent: its `groupChat.mentionPatterns` take precedence. */
  agentId?: string;
}

/** For callers authenticated by the gateway token (the operator). */
export const OPERATOR_ACCESS: AccessDecision = {
  kind: "allow",
  senderIsOwner: true,
  commandAuthorized: true,
};

export async function decideAccess(input: AccessInput): Promise<AccessDecision> {
  const { config, envelope } = input;
  const accountId = normalizeAccountId(envelope.accountId);
  const access = effectiveChannelAccess(config.channels[envelope.channel], accountId);
  if (!access.enabled)
    return {
      kind: "drop",
      reason: `channel ${envelope.channel} (account ${accountId}) is disabled or misconfigured`,
    };
  if (envelope.senderIsBot && !botsAllowed(input, access))
    return {
      kind: "drop",
      reason: "sender is a bot (allowBots is off)",
      configKey: `channels.${envelope.channel}.allowBots`,
    };
  return envelope.chatType === "direct"
    ? decideDirect(input, access, accountId)
    : decideGroup(input, access);
}

async function decideDirect(
  input: AccessInput,
  access: EffectiveChannelAccess,
  accountId: string,
): Promise<AccessDecision> {
  const { config, envelope, store, now } = input;
  const sender = { channel: envelope.channel, senderId: envelope.senderId };
  if (access.dmPolicy === "disabled")
    return {
      kind: "drop",
      reason: "dmPolicy is disabled",
      configKey: `channels.${envelope.channel}.dmPolicy`,
    };

  const configured = matchAllowList(access.allowFrom, sender, config.accessGroups);
  // "open" admits everyone only through "*"; pairing approvals never widen it (and never narrow it).
  let admitted = configured.allowed;
  if (!admitted && access.dmPolicy !== "open")
    admitted = await store.isApprovedSender(envelope.channel, accountId, envelope.senderId);
  if (admitted) return allow(input, true);

  if (envelope.kind === "system")
    return {
      kind: "drop",
      reason: `system event from a sender without DM access (dmPolicy ${access.dmPolicy})`,
    };
  if (access.dmPolicy !== "pairing")
    return {
      kind: "drop",
      reason: `sender not in allowFrom (dmPolicy ${access.dmPolicy})`,
      configKey: `channels.${envelope.channel}.allowFrom`,
    };
  const outcome = await store.createPairingRequest({
    channel: envelope.channel,
    accountId,
    senderId: envelope.senderId,
    senderName: envelope.senderName,
    originKey: envelope.dedupKey,
    now,
    ttlMs: PAIRING_CODE_TTL_MS,
    maxPending: PAIRING_MAX_PENDING_PER_ACCOUNT,
    generateCode: () => generatePairingCode(),
  });
  switch (outcome.status) {
    case "created":
      return { kind: "pairing", replyText: pairingReplyText(outcome.request) };
    case "pending":
      // The same event again: its first attempt created the request, then stopped (a crash) before
      // the reply was stored. The code is derivable from the request, so the reply is sent now.
      if (outcome.request.originKey === envelope.dedupKey)
        return { kind: "pairing", replyText: pairingReplyText(outcome.request) };
      return {
        kind: "drop",
        reason: "pairing pending: the code was already sent; approve it, or list the sender",
        configKey: `channels.${envelope.channel}.allowFrom`,
      };
    case "cap-reached":
      return {
        kind: "drop",
        reason: `pairing cap reached (${PAIRING_MAX_PENDING_PER_ACCOUNT} pending requests on this account)`,
        configKey: `channels.${envelope.channel}.allowFrom`,
      };
  }
}

async function decideGroup(
  input: AccessInput,
  access: EffectiveChannelAccess,
): Promise<AccessDecision> {
  const { config, envelope } = input;
  const sender = { channel: envelope.channel, senderId: envelope.senderId };
  if (access.groupPolicy === "disabled")
    return {
      kind: "drop",
      reason: "groupPolicy is disabled",
      configKey: `channels.${envelope.channel}.groupPolicy`,
    };

  const groupMap = groupEntries(input.config, envelope.channel, access, envelope.accountId);
  // Discord-style `guilds.<id>.channels.<id>` maps (config/guild-access.ts) take the place of `groups`.
  const guild = guildAccess(
    config.channels[envelope.channel],
    normalizeAccountId(envelope.accountId),
    envelope,
  );
  if (guild.configured && guild.refused)
    return { kind: "drop", reason: guild.reason ?? "not in the guild allowlist" };
  const hasGroupMap = Object.keys(groupMap).length > 0 || guild.configured;
  const entry = guild.configured ? guild.entry : lookupGroup(groupMap, envelope);
  if (entry && (entry.enabled === false || entry.allow === false))
    return { kind: "drop", reason: "group is disabled in the group allowlist" };

  const dmListFallback =
    !hasGroupMap &&
    access.allowFrom.length > 0 &&
    channelDefinition(envelope.channel)?.groupSendersFallBackToAllowFrom === true;
  const senderList =
    entry?.users ??
    entry?.allowFrom ??
    access.groupAllowFrom ??
    (dmListFallback ? access.allowFrom : undefined);
  const senderMatch = senderList
    ? matchAllowList(senderList, sender, config.accessGroups)
    : undefined;

  if (access.groupPolicy === "allowlist") {
    if (hasGroupMap && !entry)
      return {
        kind: "drop",
        reason: "group not in the group allowlist",
        configKey: groupAllowlistKey(envelope.channel),
      };
    if (!hasGroupMap && !senderList)
      return {
        kind: "drop",
        reason: "groupPolicy allowlist with an empty allowlist blocks every group",
        configKey: groupAllowlistKey(envelope.channel),
      };
  }
  // Explicit per-group users bind even under "open"; groupAllowFrom is bypassed by "open".
  const enforcedList =
    access.groupPolicy === "open" ? (entry?.users ?? entry?.allowFrom) : senderList;
  // A group's `roles` (Discord role ids) admit a sender holding one of them, beside `users`; with
  // `roles` alone, only those roles get in.
  const roles = entryRoles(entry);
  const roleMatched =
    roles !== undefined && (envelope.senderRoles ?? []).some((role) => roles.includes(role));
  if (roles && !(entry?.users ?? entry?.allowFrom)) {
    if (!roleMatched) return { kind: "drop", reason: "sender holds none of the group's roles" };
  } else if (
    enforcedList &&
    !roleMatched &&
    !matchAllowList(enforcedList, sender, config.accessGroups).allowed
  ) {
    return {
      kind: "drop",
      reason: "sender not in the group sender allowlist",
      configKey: `channels.${envelope.channel}.groupAllowFrom`,
    };
  }

  if (envelope.kind === "system") return allow(input, senderMatch?.allowed === true);
  const requireMention =
    entry?.requireMention ?? groupMap["*"]?.requireMention ?? access.requireMention;
  const mentioned =
    wasMentioned(config, envelope, input.agentId, access.mentionPatterns) ||
    isCommandLike(envelope.text);
  if (requireMention && !mentioned) return { kind: "history-only" };
  return allow(input, senderMatch?.allowed === true);
}

/** The key of a channel's group allowlist: `groups`, or Slack's `channels` map (OpenClaw's name there; `groups` works too). */
function groupAllowlistKey(channel: string): string {
  return `channels.${channel}.${channelDefinition(channel)?.groupAllowlistKey ?? "groups"}`;
}

const rolesView = z.object({ roles: z.array(z.string()).min(1).optional() }).loose();

function entryRoles(entry: GroupEntry | undefined): string[] | undefined {
  return entry ? rolesView.safeParse(entry).data?.roles : undefined;
}

/** `allowBots` on the group's entry wins over the account/channel setting; DMs use the latter. */
function botsAllowed(input: AccessInput, access: EffectiveChannelAccess): boolean {
  if (input.envelope.chatType !== "direct") {
    const guild = guildAccess(
      input.config.channels[input.envelope.channel],
      normalizeAccountId(input.envelope.accountId),
      input.envelope,
    );
    const entry = guild.configured
      ? guild.entry
      : lookupGroup(
          groupEntries(input.config, input.envelope.channel, access, input.envelope.accountId),
          input.envelope,
        );
    if (entry?.allowBots !== undefined) return entry.allowBots;
  }
  return access.allowBots ?? false;
}

async function allow(input: AccessInput, senderListed: boolean): Promise<AccessDecision> {
  const sender = { channel: input.envelope.channel, senderId: input.envelope.senderId };
  const senderIsOwner = await isOwner(input.config, sender, input.store);
  const configured = commandAllowFromDecision(input.config, sender);
  const commandAuthorized = senderIsOwner || (configured ?? senderListed);
  return { kind: "allow", senderIsOwner, commandAuthorized };
}

/**
 * The channel's group allowlist: `groups`, plus Slack's `channels` map when that is an object of
 * entries. An account's own `channels` map replaces the root's (as the Slack adapter reads it), so
 * an account can be kept out of channels the root allows.
 */
const slackChannelsView = z
  .object({
    channels: z.record(z.string(), groupEntrySchema).optional(),
    accounts: z
      .record(
        z.string(),
        z.object({ channels: z.record(z.string(), groupEntrySchema).optional() }).loose(),
      )
      .optional(),
  })
  .loose();

function groupEntries(
  config: EdgeclawConfig,
  channel: string,
  access: EffectiveChannelAccess,
  accountId: string,
): Record<string, GroupEntry> {
  const slackStyle = slackChannelsView.safeParse(config.channels[channel]);
  const own = slackStyle.success
    ? slackStyle.data.accounts?.[normalizeAccountId(accountId)]?.channels
    : undefined;
  const shared = slackStyle.success ? slackStyle.data.channels : undefined;
  return { ...(own ?? shared ?? {}), ...(access.groups ?? {}) };
}

function lookupGroup(
  map: Record<string, GroupEntry>,
  envelope: InboundEnvelope,
): GroupEntry | undefined {
  const byId = new Map(Object.entries(map).map(([key, value]) => [normalizeToken(key), value]));
  const entry =
    byId.get(normalizeToken(envelope.peerId)) ??
    (envelope.parentPeerId ? byId.get(normalizeToken(envelope.parentPeerId)) : undefined) ??
    byId.get("*");
  return entry && envelope.threadId ? withTopic(entry, envelope.threadId) : entry;
}

/**
 * Forum topics (Telegram `groups.<chat>.topics.<topicId>`, `"*"` for every topic of the group):
 * a topic's entry overrides its group's keys it sets and inherits the rest.
 */
const topicsView = z.object({ topics: z.record(z.string(), groupEntrySchema).optional() }).loose();

function withTopic(entry: GroupEntry, threadId: string): GroupEntry {
  const topics = topicsView.safeParse(entry).data?.topics;
  const topic = topics?.[threadId] ?? topics?.["*"];
  if (!topic) return entry;
  const merged: Record<string, unknown> = { ...entry };
  for (const [key, value] of Object.entries(topic)) if (value !== undefined) merged[key] = value;
  return merged as GroupEntry;
}
