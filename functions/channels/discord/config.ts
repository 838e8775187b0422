import * as z from "zod";
import {
  channelAccessSchema,
  channelAccountAccessSchema,
  groupEntrySchema,
} from "../../config/channel-access.ts";
import { resolveSecret, secretInputSchema, type SecretEnv } from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  enabledAccounts,
  mergedAccount,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.discord` with OpenClaw's key names and defaults (channels/discord, gateway/config-channels).
 * Access keys (dmPolicy "pairing", allowFrom, groupPolicy "allowlist", requireMention, allowBots)
 * come from the shared channelAccessSchema; `guilds.<id>` (with `channels.<id>` inside) is the guild
 * allowlist, read by functions/routing/guild-entries.ts. `accounts.<id>` blocks take the same keys
 * without defaults and inherit the root.
 *
 * Messages arrive over the Gateway (a companion connector); replies go out through Discord REST from
 * the SessionDO. `publicKey` (the application's Ed25519 key from the developer portal) turns on the
 * HTTP interactions endpoint (`interactionsPath`) for slash commands: Discord then posts interactions
 * there instead of over the Gateway. `apiBaseUrl` is edgeclaw's (proxies, tests); OpenClaw has none.
 */

export const discordReplyToModeSchema = z.enum(["off", "first", "all", "batched"]);
export type DiscordReplyToMode = z.infer<typeof discordReplyToModeSchema>;
const reactionNotificationsSchema = z.enum(["off", "own", "all", "allowlist"]);

/** `guilds.<guild>.channels.<channel>`: the shared group entry plus Discord's keys. */
export const discordChannelEntrySchema = groupEntrySchema.extend({
  roles: z.array(z.string()).optional(),
  ignoreOtherMentions: z.boolean().optional(),
  /** Narrows the tools of runs in this channel (agent/tools/conversation-policy.ts); `alsoAllow` accepted, not applied. */
  tools: z
    .object({
      allow: z.array(z.string()).optional(),
      deny: z.array(z.string()).optional(),
      alsoAllow: z.array(z.string()).optional(),
    })
    .loose()
    .optional(),
});

/** `guilds.<guild>`: guild-wide defaults and the per-channel allowlist (any entry turns it into one). */
export const discordGuildEntrySchema = groupEntrySchema.extend({
  slug: z.string().optional(),
  roles: z.array(z.string()).optional(),
  ignoreOtherMentions: z.boolean().optional(),
  reactionNotifications: reactionNotificationsSchema.optional(),
  channels: z.record(z.string(), discordChannelEntrySchema).optional(),
});
export type DiscordGuildEntry = z.infer<typeof discordGuildEntrySchema>;

const streamingSchema = z
  .object({
    /** Discord preview streaming is off by default (channels/discord). */
    mode: z.enum(["off", "partial", "block", "progress"]).default("off"),
    chunkMode: z.enum(["length", "newline"]).default("length"),
    preview: z
      .object({ toolProgress: z.boolean().default(true) })
      .loose()
      .prefault({}),
    progress: z
      .object({
        toolProgress: z.boolean().default(true),
        maxLines: z.number().int().positive().default(8),
      })
      .loose()
      .prefault({}),
  })
  .loose();

const intentsSchema = z
  .object({
    /** Privileged; without it guild messages arrive empty unless they mention the bot. */
    messageContent: z.boolean().default(true),
    /** Privileged "Server Members" (GUILD_MEMBERS): member joins. */
    guildMembers: z.boolean().default(false),
    /** Privileged; presence updates (not used by edgeclaw yet, passed to IDENTIFY). */
    presence: z.boolean().default(false),
    /** GUILD_MESSAGE_REACTIONS + DIRECT_MESSAGE_REACTIONS. */
    reactions: z.boolean().default(true),
  })
  .loose();

const accountFields = {
  token: secretInputSchema.optional(),
  applicationId: z
    .string()
    .regex(/^\d{5,25}$/)
    .optional(),
  /** Hex Ed25519 public key of the application (developer portal → General Information). */
  publicKey: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .optional(),
  interactionsPath: z
    .string()
    .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" })
    .optional(),
  apiBaseUrl: z.url().optional(),
  guilds: z.record(z.string(), discordGuildEntrySchema).optional(),
  dm: z
    .object({
      enabled: z.boolean().optional(),
      groupEnabled: z.boolean().optional(),
      groupChannels: z.array(z.string()).optional(),
    })
    .loose()
    .optional(),
  replyToMode: discordReplyToModeSchema.optional(),
  reactionNotifications: reactionNotificationsSchema.optional(),
  textChunkLimit: z.number().int().min(100).max(2000).optional(),
  maxLinesPerMessage: z.number().int().positive().optional(),
  streaming: streamingSchema.optional(),
  mediaMaxMb: z.number().positive().optional(),
  /** Inbound attachments are downloaded only from these hosts (files.ts); origins allowed for proxies and tests. */
  mediaAllowHosts: z.array(z.string().min(1)).optional(),
  suppressEmbeds: z.boolean().optional(),
  intents: intentsSchema.optional(),
  slashCommand: z.object({ ephemeral: z.boolean().optional() }).loose().optional(),
  ackReaction: z.string().optional(),
  proxy: z.string().optional(),
};

export const discordAccountSchema = channelAccountAccessSchema.extend(accountFields);

export const discordChannelSchema = channelAccessSchema.safeExtend({
  ...accountFields,
  interactionsPath: accountFields.interactionsPath.unwrap().default("/discord/interactions"),
  apiBaseUrl: z.url().default("https://discord.com/api/v10"),
  dm: z
    .object({
      enabled: z.boolean().default(true),
      groupEnabled: z.boolean().default(false),
      groupChannels: z.array(z.string()).default([]),
    })
    .loose()
    .prefault({}),
  replyToMode: discordReplyToModeSchema.default("off"),
  reactionNotifications: reactionNotificationsSchema.default("own"),
  textChunkLimit: z.number().int().min(100).max(2000).default(2000),
  maxLinesPerMessage: z.number().int().positive().default(17),
  historyLimit: z.number().int().nonnegative().default(20),
  streaming: streamingSchema.prefault({}),
  mediaMaxMb: z.number().positive().default(100),
  mediaAllowHosts: z
    .array(z.string().min(1))
    .default(["cdn.discordapp.com", "media.discordapp.net"]),
  suppressEmbeds: z.boolean().default(true),
  intents: intentsSchema.prefault({}),
  slashCommand: z
    .object({ ephemeral: z.boolean().default(true) })
    .loose()
    .prefault({}),
  accounts: z.record(z.string(), discordAccountSchema).optional(),
});
export type DiscordChannelConfig = z.infer<typeof discordChannelSchema>;

export type DiscordAccount = MergedAccount<DiscordChannelConfig>;

/** The account's block over the root (shared rules, accounts.ts); an account's `guilds` is its whole allowlist. */
export function discordAccount(discord: DiscordChannelConfig, accountId: string): DiscordAccount {
  return mergedAccount(discord, accountId, {
    replace: ["guilds"],
    replaceWhen: (value) => "source" in value,
  });
}

/** Enabled accounts (none while the channel is off). */
export function discordAccounts(discord: DiscordChannelConfig): DiscordAccount[] {
  return enabledAccounts(discord, (accountId) => discordAccount(discord, accountId));
}

/** The env variable that stands in for the default account's bot token (credentials.ts lists it too). */
export const DISCORD_BOT_TOKEN_ENV = "DISCORD_BOT_TOKEN";

/** The env var the token comes from, when it is a SecretRef (the companion reads the same one). */
export function discordTokenEnvName(account: DiscordAccount): string | undefined {
  if (account.token !== undefined) {
    if (typeof account.token === "object") return account.token.id;
    return /^\$\{([A-Z0-9_]+)\}$/.exec(account.token)?.[1];
  }
  return account.isDefault ? DISCORD_BOT_TOKEN_ENV : undefined;
}

/** The bot token: the config value wins; DISCORD_BOT_TOKEN is the default account's fallback only. */
export function discordBotToken(account: DiscordAccount, env: SecretEnv): string | undefined {
  return (
    resolveSecret(account.token, env) ?? defaultAccountEnv(account, env)(DISCORD_BOT_TOKEN_ENV)
  );
}

/**
 * The bot's user id, read from its token: a bot token's first segment is the user id in base64
 * (so the Worker knows "itself" without a REST call). Falls back to `applicationId`, which equals
 * the bot user id for every application created since 2020.
 */
export function discordBotUserId(
  token: string | undefined,
  account: DiscordAccount,
): string | undefined {
  const first = token?.split(".")[0];
  if (first) {
    try {
      const decoded = atob(
        first
          .replace(/-/g, "+")
          .replace(/_/g, "/")
          .padEnd(Math.ceil(first.length / 4) * 4, "="),
      );
      if (/^\d{5,25}$/.test(decoded)) return decoded;
    } catch {
      // not base64: fall through
    }
  }
  return account.applicationId;
}

/** The base URL with no trailing slash (`https://discord.com/api/v10`). */
export function discordApiBase(account: DiscordAccount): string {
  return account.apiBaseUrl.replace(/\/+$/, "");
}
