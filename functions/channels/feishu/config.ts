import * as z from "zod";
import { channelAccessSchema, channelAccountAccessSchema } from "../../config/channel-access.ts";
import { resolveSecret, secretInputSchema, type SecretEnv } from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  mergedAccount,
  webhookAccounts,
  type ClashHandler,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.feishu` with OpenClaw's key names and defaults (channels/feishu): the shared access keys
 * plus appId / appSecret / encryptKey / verificationToken, `domain` (`feishu` → open.feishu.cn,
 * `lark` → open.larksuite.com, or an https base), `connectionMode` (OpenClaw's default "websocket";
 * only "webhook" accounts are served by the Worker — the long connection belongs to the companion),
 * `webhookPath` (/feishu/events), `textChunkLimit` 4000, `streaming.chunkMode`, `mediaMaxMb` 30,
 * `replyInThread`, `typingIndicator` (true), `streaming.mode` ("partial": replies stream through a
 * card; "off"), `streaming.block.enabled` (false), `renderMode` (auto | raw | card; raw disables cards).
 * `accounts.<id>` inherit the root. Env fallbacks (FEISHU_APP_ID, FEISHU_APP_SECRET,
 * FEISHU_ENCRYPT_KEY, FEISHU_VERIFICATION_TOKEN, FEISHU_BOT_OPEN_ID) apply to the default account only.
 *
 * edgeclaw keys: `botOpenId` — the bot's own open_id, which mention gating compares with
 * `mentions[].id.open_id` (the Worker must not ask Feishu on the ack path; the open_id is shown in
 * the developer console and in any event where the bot is mentioned); `signatureMaxAgeSeconds`
 * (Feishu publishes no window; 300 s); `apiBaseUrl` overrides `domain` (proxies, tests).
 */

const pathSchema = z
  .string()
  .regex(/^\/[\w\-./]*(\?[\w\-.=&%]*)?$/, { message: "expected a path starting with /" });

/** Feishu's own cap on a text message is 150 KB; OpenClaw chunks at 4000 characters. */
export const FEISHU_TEXT_LIMIT = 4000;

export const FEISHU_DOMAINS = {
  feishu: "https://open.feishu.cn/",
  lark: "https://open.larksuite.com/",
} as const;

const domainSchema = z.union([z.enum(["feishu", "lark"]), z.url().regex(/^https?:\/\//)]);

const feishuAccountFields = {
  appId: z.string().min(1).optional(),
  appSecret: secretInputSchema.optional(),
  encryptKey: secretInputSchema.optional(),
  verificationToken: secretInputSchema.optional(),
  botOpenId: z.string().min(1).optional(),
  name: z.string().optional(),
  domain: domainSchema.optional(),
  apiBaseUrl: z.url().optional(),
  connectionMode: z.enum(["websocket", "webhook"]).optional(),
  webhookPath: pathSchema.optional(),
  textChunkLimit: z.number().int().min(100).max(30_000).optional(),
  streaming: z
    .object({
      mode: z.enum(["partial", "off"]).optional(),
      chunkMode: z.enum(["length", "newline"]).optional(),
      block: z.object({ enabled: z.boolean().optional() }).loose().optional(),
    })
    .loose()
    .optional(),
  mediaMaxMb: z.number().positive().optional(),
  replyInThread: z.enum(["disabled", "enabled"]).optional(),
  renderMode: z.enum(["auto", "raw", "card"]).optional(),
  signatureMaxAgeSeconds: z.number().int().min(30).max(3600).optional(),
  typingIndicator: z.boolean().optional(),
};

export const feishuAccountSchema = channelAccountAccessSchema.extend(feishuAccountFields);

export const feishuChannelSchema = channelAccessSchema.safeExtend({
  ...feishuAccountFields,
  domain: domainSchema.default("feishu"),
  connectionMode: z.enum(["websocket", "webhook"]).default("websocket"),
  webhookPath: pathSchema.default("/feishu/events"),
  textChunkLimit: z.number().int().min(100).max(30_000).default(FEISHU_TEXT_LIMIT),
  mediaMaxMb: z.number().positive().default(30),
  replyInThread: z.enum(["disabled", "enabled"]).default("disabled"),
  renderMode: z.enum(["auto", "raw", "card"]).default("auto"),
  signatureMaxAgeSeconds: z.number().int().min(30).max(3600).default(300),
  typingIndicator: z.boolean().default(true),
  accounts: z.record(z.string(), feishuAccountSchema).optional(),
});
export type FeishuChannelConfig = z.infer<typeof feishuChannelSchema>;

/** The settings in force for one account: its block over the root (objects merged one level deep, `groups` replaced). */
export type FeishuAccount = MergedAccount<FeishuChannelConfig>;

export function feishuAccount(feishu: FeishuChannelConfig, accountId: string): FeishuAccount {
  return mergedAccount(feishu, accountId, { replace: ["groups"] });
}

/** The Open Platform base for an account: `apiBaseUrl`, else its `domain`. */
export function feishuApiBase(account: FeishuAccount): string {
  const base =
    account.apiBaseUrl ??
    (account.domain === "feishu" || account.domain === "lark"
      ? FEISHU_DOMAINS[account.domain]
      : account.domain);
  return base.endsWith("/") ? base : `${base}/`;
}

/**
 * Enabled webhook-mode accounts by `webhookPath`. An account in "websocket" mode is the companion's
 * and is not mounted; a second account on a path already taken is not served (`onClash`).
 */
export function feishuWebhookAccounts(
  feishu: FeishuChannelConfig,
  onClash?: ClashHandler,
): Map<string, FeishuAccount> {
  const pathOf = (account: FeishuAccount) =>
    account.connectionMode === "webhook" ? account.webhookPath : undefined;
  return webhookAccounts(feishu, (accountId) => feishuAccount(feishu, accountId), pathOf, onClash);
}

export interface FeishuSecrets {
  appId?: string;
  appSecret?: string;
  encryptKey?: string;
  verificationToken?: string;
  botOpenId?: string;
}

/** The env variables that stand in for the default account's settings (credentials.ts lists them too). */
export const FEISHU_ENV = {
  appId: "FEISHU_APP_ID",
  appSecret: "FEISHU_APP_SECRET",
  encryptKey: "FEISHU_ENCRYPT_KEY",
  verificationToken: "FEISHU_VERIFICATION_TOKEN",
  botOpenId: "FEISHU_BOT_OPEN_ID",
} as const;

/** Config values (SecretRef or literal) win; FEISHU_* env variables stand in for the default account only. */
export function feishuSecrets(account: FeishuAccount, env: SecretEnv): FeishuSecrets {
  const fallback = defaultAccountEnv(account, env);
  return {
    appId: account.appId ?? fallback(FEISHU_ENV.appId),
    appSecret: resolveSecret(account.appSecret, env) ?? fallback(FEISHU_ENV.appSecret),
    encryptKey: resolveSecret(account.encryptKey, env) ?? fallback(FEISHU_ENV.encryptKey),
    verificationToken:
      resolveSecret(account.verificationToken, env) ?? fallback(FEISHU_ENV.verificationToken),
    botOpenId: account.botOpenId ?? fallback(FEISHU_ENV.botOpenId),
  };
}
