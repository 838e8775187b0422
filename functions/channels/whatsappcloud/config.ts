import * as z from "zod";
import {
  allowListSchema,
  channelAccessSchema,
  channelAccountAccessSchema,
} from "../../config/channel-access.ts";
import { resolveSecret, secretInputSchema, type SecretEnv } from "../../config/secret-ref.ts";
import { defaultAccountEnv, mergedAccount, type MergedAccount } from "../accounts.ts";

/**
 * `channels.whatsappcloud`: the official WhatsApp Business Cloud API (Meta's Graph API), with
 * OpenClaw's `channels.whatsapp` key names and defaults where they apply to it: the shared access
 * keys (dmPolicy "pairing", allowFrom of E.164 numbers, groupPolicy "allowlist", groupAllowFrom,
 * groups.<id>), textChunkLimit 4000, mediaMaxMb 50, sendReadReceipts true, replyToMode
 * "off", accounts.<id> (OpenClaw's `streaming.chunkMode` is not taken: chunks split by length). The Cloud API's own keys: appSecret (signs webhooks), accessToken (sends),
 * verifyToken (Meta's subscription handshake) and phoneNumberId (the business number: every
 * webhook names it, `metadata.phone_number_id`); edgeclaw's webhookPath and graphApiBaseUrl /
 * graphApiVersion (proxies, the local fake).
 *
 * Each account has its own `webhookPath`: one Meta app's callback URL, or a number's own
 * (Meta's per-number `override_callback_uri`). Env fallbacks (WHATSAPP_CLOUD_*) apply to the
 * default account only.
 */

/** The Cloud API's limit on one text message body. */
export const WHATSAPP_CLOUD_TEXT_LIMIT = 4096;

const fields = {
  appSecret: secretInputSchema,
  accessToken: secretInputSchema,
  verifyToken: secretInputSchema,
  phoneNumberId: z.string().regex(/^\d{1,32}$/),
  webhookPath: z.string().regex(/^\/[\w\-./]*$/),
  graphApiBaseUrl: z.url(),
  graphApiVersion: z.string().regex(/^v\d+\.\d+$/),
  textChunkLimit: z.number().int().min(100).max(WHATSAPP_CLOUD_TEXT_LIMIT),
  mediaMaxMb: z.number().positive(),
  sendReadReceipts: z.boolean(),
  replyToMode: z.enum(["off", "first", "all"]),
};
/**
 * OpenClaw normalises the numbers in `allowFrom` / `groupAllowFrom` to E.164 ("+1 (555) 123-4567",
 * "15551234567" → "+15551234567", the sender id parse.ts makes); "*" and other entries stay.
 */
const numbers = allowListSchema.transform((list) =>
  list.map((entry) => (/^\+?[\d\s().-]+$/.test(entry) ? `+${entry.replace(/\D/g, "")}` : entry)),
);

type Field = keyof typeof fields;
const optional = <K extends Field>(key: K) =>
  fields[key].optional() as z.ZodOptional<(typeof fields)[K]>;
const optionalFields = Object.fromEntries(
  Object.keys(fields).map((key) => [key, optional(key as Field)]),
) as { [K in Field]: z.ZodOptional<(typeof fields)[K]> };

export const whatsappCloudAccountSchema = channelAccountAccessSchema.extend({
  ...optionalFields,
  allowFrom: numbers.optional(),
  groupAllowFrom: numbers.optional(),
});

export const whatsappCloudChannelSchema = channelAccessSchema.safeExtend({
  ...optionalFields,
  allowFrom: numbers.default([]),
  groupAllowFrom: numbers.optional(),
  webhookPath: fields.webhookPath.default("/whatsappcloud/webhook"),
  graphApiBaseUrl: fields.graphApiBaseUrl.default("https://graph.facebook.com/"),
  graphApiVersion: fields.graphApiVersion.default("v24.0"),
  textChunkLimit: fields.textChunkLimit.default(4000),
  mediaMaxMb: fields.mediaMaxMb.default(50),
  sendReadReceipts: fields.sendReadReceipts.default(true),
  replyToMode: fields.replyToMode.default("off"),
  accounts: z.record(z.string(), whatsappCloudAccountSchema).optional(),
});
export type WhatsAppCloudChannelConfig = z.infer<typeof whatsappCloudChannelSchema>;

/** The settings in force for one account: its block over the root (`groups` replaced whole, as OpenClaw does). */
export type WhatsAppCloudAccount = MergedAccount<WhatsAppCloudChannelConfig>;

export function whatsappCloudAccount(
  root: WhatsAppCloudChannelConfig,
  accountId: string,
): WhatsAppCloudAccount {
  // A SecretRef is one value: an account's { source, id } never merges with the root's.
  return mergedAccount(root, accountId, { replace: ["groups"], replaceWhen: (v) => "source" in v });
}

/** The env variables that stand in for the default account's settings (credentials.ts lists them too). */
export const WHATSAPP_CLOUD_ENV = {
  appSecret: "WHATSAPP_CLOUD_APP_SECRET",
  accessToken: "WHATSAPP_CLOUD_ACCESS_TOKEN",
  verifyToken: "WHATSAPP_CLOUD_VERIFY_TOKEN",
  phoneNumberId: "WHATSAPP_CLOUD_PHONE_NUMBER_ID",
} as const;

/** The account's secrets and number: the config value (a SecretRef or a literal) wins, then the env fallback. */
export function whatsappCloudSecrets(
  account: WhatsAppCloudAccount,
  env: SecretEnv,
): Partial<Record<keyof typeof WHATSAPP_CLOUD_ENV, string>> {
  const fallback = defaultAccountEnv(account, env);
  const secret = (field: "appSecret" | "accessToken" | "verifyToken") =>
    resolveSecret(account[field], env) ?? fallback(WHATSAPP_CLOUD_ENV[field]);
  const number = account.phoneNumberId ?? fallback(WHATSAPP_CLOUD_ENV.phoneNumberId);
  return {
    appSecret: secret("appSecret"),
    accessToken: secret("accessToken"),
    verifyToken: secret("verifyToken"),
    phoneNumberId: number?.match(/^\d{1,32}$/)?.[0],
  };
}

/** `<graphApiBaseUrl>/<graphApiVersion>/<path>`. */
export function graphUrl(account: WhatsAppCloudAccount, path: string): string {
  return `${account.graphApiBaseUrl.replace(/\/$/, "")}/${account.graphApiVersion}/${path}`;
}
