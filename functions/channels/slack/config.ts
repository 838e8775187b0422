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
  webhookAccounts,
  type ClashHandler,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.slack` with the OpenClaw key names and defaults (channels/slack, gateway/config-channels).
 * The access keys (dmPolicy, allowFrom, groupPolicy, …) come from the shared channelAccessSchema;
 * this adds Slack's own. `accounts.<id>` blocks take the same keys without defaults and inherit the
 * root (`slackAccount`).
 *
 * Where the docs disagree: `textChunkLimit` is 8000 (the Slack page; the config page's example shows
 * 4000), `streaming.mode` is "partial" (the config page calls it the canonical default; the Slack
 * page says "progress"). `mode` has no default here: edgeclaw's Worker serves HTTP Request URLs, so an
 * account is served over HTTP unless it says `mode: "socket"` / `"relay"` (those go to the companion).
 */

export const replyToModeSchema = z.enum(["off", "first", "all", "batched"]);
export type ReplyToMode = z.infer<typeof replyToModeSchema>;
export const streamingModeSchema = z.enum(["off", "partial", "block", "progress"]);
export type StreamingMode = z.infer<typeof streamingModeSchema>;

/** `channels.slack.channels.<C…>`: the shared group entry plus Slack's per-channel keys. */
export const slackChannelEntrySchema = groupEntrySchema.extend({
  allowBots: z.boolean().optional(),
  ignoreOtherMentions: z.boolean().optional(),
  replyToMode: replyToModeSchema.optional(),
});

const streamingSchema = z
  .object({
    mode: streamingModeSchema.default("partial"),
    chunkMode: z.enum(["length", "newline"]).default("length"),
    /** Slack's chat.startStream/appendStream/stopStream when mode is partial and a reply thread exists. */
    nativeTransport: z.boolean().default(true),
    preview: z
      .object({
        toolProgress: z.boolean().default(true),
        commandText: z.enum(["status", "raw"]).default("status"),
      })
      .loose()
      .prefault({}),
    progress: z
      .object({
        toolProgress: z.boolean().default(true),
        commandText: z.enum(["status", "raw"]).default("status"),
        nativeTaskCards: z.boolean().default(false),
      })
      .loose()
      .prefault({}),
  })
  .loose();

const slashCommandSchema = z
  .object({
    enabled: z.boolean().default(false),
    name: z
      .string()
      .regex(/^[a-z0-9_-]{1,31}$/i)
      .default("openclaw"),
    sessionPrefix: z.string().min(1).default("slack:slash"),
    ephemeral: z.boolean().default(true),
  })
  .loose();

/** Keys an account may set; every one is optional (unset = the root's value). */
const slackAccountFields = {
  mode: z.enum(["http", "socket", "relay"]).optional(),
  botToken: secretInputSchema.optional(),
  signingSecret: secretInputSchema.optional(),
  /** Socket Mode's app-level token (`xapp-…`, scope connections:write); read by the companion, never by the Worker. */
  appToken: secretInputSchema.optional(),
  userToken: secretInputSchema.optional(),
  webhookPath: z
    .string()
    .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" })
    .optional(),
  /** Base URL of the Web API (sovereign clouds, proxies, tests). */
  apiBaseUrl: z.url().optional(),
  channels: z.record(z.string(), slackChannelEntrySchema).optional(),
  allowBots: z.boolean().optional(),
  ignoreOtherMentions: z.boolean().optional(),
  dm: z
    .object({
      enabled: z.boolean().optional(),
      groupEnabled: z.boolean().optional(),
      groupChannels: z.array(z.string()).optional(),
      replyToMode: replyToModeSchema.optional(),
    })
    .loose()
    .optional(),
  replyToMode: replyToModeSchema.optional(),
  replyToModeByChatType: z
    .object({
      direct: replyToModeSchema.optional(),
      group: replyToModeSchema.optional(),
      channel: replyToModeSchema.optional(),
    })
    .strict()
    .optional(),
  thread: z
    .object({
      historyScope: z.enum(["thread", "channel"]).optional(),
      inheritParent: z.boolean().optional(),
      initialHistoryLimit: z.number().int().nonnegative().optional(),
    })
    .loose()
    .optional(),
  implicitMentions: z
    .object({ replyToBot: z.boolean().optional(), threadParticipation: z.boolean().optional() })
    .loose()
    .optional(),
  reactionNotifications: z.enum(["off", "own", "all", "allowlist"]).optional(),
  reactionAllowlist: z.array(z.string()).optional(),
  ackReaction: z.string().optional(),
  typingReaction: z.string().optional(),
  textChunkLimit: z.number().int().min(100).max(40_000).optional(),
  streaming: streamingSchema.optional(),
  mediaMaxMb: z.number().positive().optional(),
  unfurlLinks: z.boolean().optional(),
  unfurlMedia: z.boolean().optional(),
  slashCommand: slashCommandSchema.optional(),
};

export const slackAccountSchema = channelAccountAccessSchema.extend(slackAccountFields);

export const slackChannelSchema = channelAccessSchema.safeExtend({
  ...slackAccountFields,
  webhookPath: slackAccountFields.webhookPath.unwrap().default("/slack/events"),
  apiBaseUrl: z.url().default("https://slack.com/api/"),
  allowBots: z.boolean().default(false),
  ignoreOtherMentions: z.boolean().default(false),
  replyToMode: replyToModeSchema.default("off"),
  thread: z
    .object({
      historyScope: z.enum(["thread", "channel"]).default("thread"),
      inheritParent: z.boolean().default(false),
      initialHistoryLimit: z.number().int().nonnegative().default(20),
    })
    .loose()
    .prefault({}),
  implicitMentions: z
    .object({
      replyToBot: z.boolean().default(true),
      threadParticipation: z.boolean().default(true),
    })
    .loose()
    .prefault({}),
  reactionNotifications: z.enum(["off", "own", "all", "allowlist"]).default("own"),
  textChunkLimit: z.number().int().min(100).max(40_000).default(8000),
  streaming: streamingSchema.prefault({}),
  mediaMaxMb: z.number().positive().default(20),
  unfurlLinks: z.boolean().default(false),
  slashCommand: slashCommandSchema.prefault({}),
  accounts: z.record(z.string(), slackAccountSchema).optional(),
});
export type SlackChannelConfig = z.infer<typeof slackChannelSchema>;

/** The settings in force for one account: its block over the root (objects merged one level deep, `channels` replaced). */
export type SlackAccount = MergedAccount<SlackChannelConfig>;

/**
 * Accounts served over HTTP, by their `webhookPath` (enabled, not Socket Mode / relay: those are the
 * companion's). A second account on a path already taken is not served; `onClash` hears about it.
 */
export function slackHttpAccounts(
  slack: SlackChannelConfig,
  onClash?: ClashHandler,
): Map<string, SlackAccount> {
  const pathOf = (account: SlackAccount) =>
    !account.mode || account.mode === "http" ? account.webhookPath : undefined;
  return webhookAccounts(slack, (accountId) => slackAccount(slack, accountId), pathOf, onClash);
}

/** Accounts served over Socket Mode by the companion (enabled, `mode: "socket"`). */
export function slackSocketAccounts(slack: SlackChannelConfig): SlackAccount[] {
  return enabledAccounts(
    slack,
    (accountId) => slackAccount(slack, accountId),
    (account) => account.mode === "socket",
  );
}

export function slackAccount(slack: SlackChannelConfig, accountId: string): SlackAccount {
  return mergedAccount(slack, accountId, { replace: ["channels"] });
}

/** The env variables that stand in for the default account's secrets (credentials.ts lists them too). */
export const SLACK_ENV = {
  botToken: "SLACK_BOT_TOKEN",
  signingSecret: "SLACK_SIGNING_SECRET",
  appToken: "SLACK_APP_TOKEN",
} as const;

/**
 * Env fallbacks apply to the default account only (OpenClaw: SLACK_BOT_TOKEN / SLACK_SIGNING_SECRET);
 * a value in the config always wins.
 */
export function slackSecrets(
  account: SlackAccount,
  env: SecretEnv,
): { botToken?: string; signingSecret?: string } {
  const fallback = defaultAccountEnv(account, env);
  return {
    botToken: resolveSecret(account.botToken, env) ?? fallback(SLACK_ENV.botToken),
    signingSecret: resolveSecret(account.signingSecret, env) ?? fallback(SLACK_ENV.signingSecret),
  };
}

/** Thread mode for a reply: channel entry → chat type override → legacy dm.replyToMode → account. */
export function replyToModeFor(
  account: SlackAccount,
  chatType: "direct" | "group" | "channel",
  channelId: string,
): ReplyToMode {
  const entry = chatType === "direct" ? undefined : account.channels?.[channelId];
  return (
    entry?.replyToMode ??
    account.replyToModeByChatType?.[chatType] ??
    (chatType === "direct" ? account.dm?.replyToMode : undefined) ??
    account.replyToMode
  );
}
