import * as z from "zod";
import {
  allowListSchema,
  channelAccessSchema,
  channelAccountAccessSchema,
  groupEntrySchema,
} from "../../config/channel-access.ts";
import { resolveSecret, secretInputSchema, type SecretEnv } from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  mergedAccount,
  webhookAccounts,
  type ClashHandler,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.telegram` with OpenClaw's key names and defaults (channels/telegram). The access keys
 * (dmPolicy pairing, groupPolicy allowlist, requireMention, allowFrom, groups, …) come from the
 * shared channelAccessSchema; this adds Telegram's own. `accounts.<id>` blocks take the same keys
 * without defaults and inherit the root (`telegramAccount`); a `groups` map on an account replaces
 * the root's (no deep merge), as the docs say.
 *
 * Defaults from the docs: webhookPath `/telegram-webhook`, textChunkLimit 4000 (Telegram takes at
 * most 4096 characters per message), streaming.mode `progress`, replyToMode `off`, mediaMaxMb 100,
 * linkPreview on. `apiRoot` is the Bot API root without `/bot` (self-hosted Bot API servers, proxies,
 * and the local simulator and tests). The Worker never long-polls: `mode: "polling"` accounts are
 * polled by the companion (socket.ts), which forwards each raw Update.
 *
 * edgeclaw additions: `botUsername` (the bot's @name for mention gating; the Worker never calls
 * getMe on the ack path — `npx edgeclaw channels telegram info` prints it) and the env fallback
 * TELEGRAM_WEBHOOK_SECRET for the default account's `webhookSecret`, beside OpenClaw's
 * TELEGRAM_BOT_TOKEN.
 */

export const TELEGRAM_MAX_MESSAGE_CHARS = 4096;

export const telegramStreamingModeSchema = z.enum(["off", "partial", "block", "progress"]);
export type TelegramStreamingMode = z.infer<typeof telegramStreamingModeSchema>;
export const telegramReplyToModeSchema = z.enum(["off", "first", "all", "batched"]);

/** A forum topic's entry (`groups.<chatId>.topics.<topicId>`): inherits the group's unless set. */
export const telegramTopicEntrySchema = groupEntrySchema.extend({
  groupPolicy: z.enum(["allowlist", "open", "disabled"]).optional(),
  /** Topics only: routes this topic to another agent (not inherited from the group). */
  agentId: z.string().optional(),
  systemPrompt: z.string().optional(),
  skills: z.array(z.string()).optional(),
});

/** `groups.<chatId>` (negative ids for groups/supergroups, or "*"). */
export const telegramGroupEntrySchema = groupEntrySchema.extend({
  groupPolicy: z.enum(["allowlist", "open", "disabled"]).optional(),
  systemPrompt: z.string().optional(),
  skills: z.array(z.string()).optional(),
  topics: z.record(z.string(), telegramTopicEntrySchema).optional(),
});

const streamingSchema = z
  .object({
    mode: telegramStreamingModeSchema.default("progress"),
    chunkMode: z.enum(["length", "newline"]).default("length"),
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
        commentary: z.boolean().default(false),
      })
      .loose()
      .prefault({}),
  })
  .loose();

/** Numeric user ids; `tg:` is accepted and normalised to `telegram:` (numbers become strings). */
const telegramAllowListSchema = allowListSchema.transform((entries) =>
  entries.map((entry) => entry.replace(/^tg:/i, "telegram:")),
);

const webhookPathSchema = z
  .string()
  .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" });

/** Keys an account may set; every one optional (unset = the root's value). */
const telegramAccountFields = {
  name: z.string().optional(),
  allowFrom: telegramAllowListSchema.optional(),
  groupAllowFrom: telegramAllowListSchema.optional(),
  botToken: secretInputSchema.optional(),
  /** The bot's username without or with "@", for `@botname` mention detection in groups. */
  botUsername: z
    .string()
    .regex(/^@?[A-Za-z0-9_]{3,64}$/, { message: "a Telegram username (letters, digits, _)" })
    .optional(),
  /**
   * edgeclaw's: how updates arrive. "webhook" (default, today's behaviour): Telegram POSTs to the
   * Worker. "polling": the companion long-polls getUpdates and forwards each update (for users who
   * cannot expose a public URL); the Worker then serves no webhook path for the account.
   */
  mode: z.enum(["webhook", "polling"]).optional(),
  /** Polling only: seconds one getUpdates call waits for updates (Bot API `timeout`). */
  pollTimeoutSeconds: z.number().int().min(0).max(50).optional(),
  webhookUrl: z.url().optional(),
  webhookSecret: secretInputSchema.optional(),
  webhookPath: webhookPathSchema.optional(),
  apiRoot: z.url().optional(),
  groups: z.record(z.string(), telegramGroupEntrySchema).optional(),
  replyToMode: telegramReplyToModeSchema.optional(),
  implicitMentions: z.object({ replyToBot: z.boolean().optional() }).loose().optional(),
  textChunkLimit: z.number().int().min(100).max(TELEGRAM_MAX_MESSAGE_CHARS).optional(),
  streaming: streamingSchema.optional(),
  mediaMaxMb: z.number().positive().optional(),
  linkPreview: z.boolean().optional(),
};

export const telegramAccountSchema = channelAccountAccessSchema.extend(telegramAccountFields);

export const telegramChannelSchema = channelAccessSchema.safeExtend({
  ...telegramAccountFields,
  allowFrom: telegramAllowListSchema.default([]),
  webhookPath: webhookPathSchema.default("/telegram-webhook"),
  mode: z.enum(["webhook", "polling"]).default("webhook"),
  pollTimeoutSeconds: z.number().int().min(0).max(50).default(30),
  apiRoot: z.url().default("https://api.telegram.org"),
  replyToMode: telegramReplyToModeSchema.default("off"),
  implicitMentions: z
    .object({ replyToBot: z.boolean().default(true) })
    .loose()
    .prefault({}),
  textChunkLimit: z.number().int().min(100).max(TELEGRAM_MAX_MESSAGE_CHARS).default(4000),
  streaming: streamingSchema.prefault({}),
  mediaMaxMb: z.number().positive().default(100),
  linkPreview: z.boolean().default(true),
  accounts: z.record(z.string(), telegramAccountSchema).optional(),
});
export type TelegramChannelConfig = z.infer<typeof telegramChannelSchema>;

/** The settings in force for one account: its block over the root (objects merged one level deep, `groups` replaced). */
export type TelegramAccount = MergedAccount<TelegramChannelConfig>;

export function telegramAccount(
  telegram: TelegramChannelConfig,
  accountId: string,
): TelegramAccount {
  return mergedAccount(telegram, accountId, { replace: ["groups"] });
}

/** Enabled webhook-mode accounts by `webhookPath` (polling accounts belong to the companion); a second account on a path already taken is not served (`onClash`). */
export function telegramWebhookAccounts(
  telegram: TelegramChannelConfig,
  onClash?: ClashHandler,
): Map<string, TelegramAccount> {
  const pathOf = (account: TelegramAccount) =>
    account.mode === "webhook" ? account.webhookPath : undefined;
  return webhookAccounts(
    telegram,
    (accountId) => telegramAccount(telegram, accountId),
    pathOf,
    onClash,
  );
}

/** The env variables that stand in for the default account's secrets (credentials.ts lists them too). */
export const TELEGRAM_ENV = {
  botToken: "TELEGRAM_BOT_TOKEN",
  webhookSecret: "TELEGRAM_WEBHOOK_SECRET",
} as const;

/**
 * The bot token and webhook secret of an account. Env fallbacks (TELEGRAM_BOT_TOKEN,
 * TELEGRAM_WEBHOOK_SECRET) apply to the default account only; a value in the config always wins.
 */
export function telegramSecrets(
  account: TelegramAccount,
  env: SecretEnv,
): { botToken?: string; webhookSecret?: string } {
  const fallback = defaultAccountEnv(account, env);
  return {
    botToken: resolveSecret(account.botToken, env) ?? fallback(TELEGRAM_ENV.botToken),
    webhookSecret:
      resolveSecret(account.webhookSecret, env) ?? fallback(TELEGRAM_ENV.webhookSecret),
  };
}

/** The bot's own user id: a bot token is `<bot id>:<secret>`. */
export function botIdFromToken(botToken: string | undefined): string | undefined {
  const match = /^(\d{1,20}):/.exec(botToken ?? "");
  return match?.[1];
}

export function normalizedBotUsername(account: TelegramAccount): string | undefined {
  return account.botUsername?.replace(/^@/, "").toLowerCase();
}

/** The Bot API URL of one method: `<apiRoot>/bot<token>/<method>` (apiRoot never carries `/bot`). */
export function botApiUrl(apiRoot: string, botToken: string, method: string): string {
  return `${apiRoot.replace(/\/+$/, "")}/bot${botToken}/${method}`;
}

/** A file's download URL after getFile: `<apiRoot>/file/bot<token>/<file_path>`. */
export function botFileUrl(apiRoot: string, botToken: string, filePath: string): string {
  return `${apiRoot.replace(/\/+$/, "")}/file/bot${botToken}/${filePath.replace(/^\/+/, "")}`;
}
