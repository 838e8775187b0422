import * as z from "zod";
import {
  allowListSchema,
  channelAccessSchema,
  channelAccountAccessSchema,
} from "../../config/channel-access.ts";
import { resolveSecret, secretInputSchema, type SecretEnv } from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  defaultAccountId,
  mergedAccount,
  webhookAccounts,
  type ClashHandler,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.sms` with OpenClaw's key names and defaults (channels/sms): Twilio credentials, the
 * webhook path, the public URL Twilio signs, `dmPolicy` "pairing", `textChunkLimit` 1500. SMS is
 * direct messages only, so the group keys of the shared access schema never apply.
 *
 * Added for the Worker: `apiBaseUrl` (the Twilio REST origin, for proxies and the local fakes) and
 * `mediaMaxMb` (5, the seed's 5 MiB bound on inbound MMS downloads).
 *
 * Env fallbacks (default account only; the config wins): TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN,
 * TWILIO_PHONE_NUMBER (alias TWILIO_SMS_FROM), TWILIO_MESSAGING_SERVICE_SID, SMS_PUBLIC_WEBHOOK_URL,
 * SMS_DANGEROUSLY_DISABLE_SIGNATURE_VALIDATION. The config file is bundled at deploy and read
 * without the env where routes and access are decided, so SMS_WEBHOOK_PATH, SMS_ALLOWED_USERS and
 * SMS_TEXT_CHUNK_LIMIT are not read: set `webhookPath`, `allowFrom`, `textChunkLimit` instead.
 */

export const SMS_DEFAULT_WEBHOOK_PATH = "/webhooks/sms";
/** Twilio's `Body` limit per message (Messages API); one chunk never exceeds it. */
export const TWILIO_MAX_BODY_CHARS = 1600;

/**
 * `sms:+1…` and `twilio-sms:+1…` name the same sender as a bare `+1…` (OpenClaw normalises both
 * prefixes); spaces, dashes, dots and parentheses in a phone number are dropped. Stored as
 * `sms:<E.164>` or the bare number, the forms the shared allowlist matcher understands.
 */
function normalizeSmsAllowEntry(entry: string): string {
  const trimmed = entry.trim();
  const prefixed = /^(?:twilio-sms|sms):(.*)$/i.exec(trimmed);
  const rest = prefixed ? prefixed[1]!.trim() : trimmed;
  const phone =
    /^\+?[\d\s().-]+$/.test(rest) && /\d/.test(rest) ? rest.replace(/[\s().-]/g, "") : rest;
  return prefixed ? `sms:${phone}` : phone;
}
const smsAllowListSchema = allowListSchema.transform((entries) =>
  entries.map(normalizeSmsAllowEntry),
);

const publicUrlSchema = z
  .url({ protocol: /^https?$/ })
  .refine((value) => !/^[a-z]+:\/\/[^/?#]*@/i.test(value), {
    message: "must not contain user:password@ (Twilio signs the URL without it)",
  });

/** Keys an account may set; every one is optional (unset = the root's value). */
const smsAccountFields = {
  accountSid: secretInputSchema.optional(),
  authToken: secretInputSchema.optional(),
  /** E.164 sender; wins over `messagingServiceSid` when both resolve. */
  fromNumber: secretInputSchema.optional(),
  messagingServiceSid: secretInputSchema.optional(),
  defaultTo: z.string().optional(),
  webhookPath: z
    .string()
    .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" })
    .optional(),
  /**
   * The URL exactly as entered in the Twilio console (scheme, host, port, path, query). Twilio signs
   * that string; behind a proxy or a custom route it differs from the URL the Worker sees, so it
   * must be set there. Unset: the URL the Worker received is used. Also the base of the status
   * callback URL given with each outbound message (none without it).
   */
  publicWebhookUrl: publicUrlSchema.optional(),
  dangerouslyDisableSignatureValidation: z.boolean().optional(),
  textChunkLimit: z.number().int().min(100).max(TWILIO_MAX_BODY_CHARS).optional(),
  apiBaseUrl: z.url().optional(),
  mediaMaxMb: z.number().positive().optional(),
  /**
   * How long a MessageSid is remembered. Twilio's X-Twilio-Signature covers the URL and the
   * parameters but no time, so a captured request verifies for as long as the Auth Token that
   * signed it is valid; rotate the Auth Token at least this often.
   */
  messageSidRetentionDays: z.number().int().min(2).max(3650).optional(),
  allowFrom: smsAllowListSchema.optional(),
};

export const smsAccountSchema = channelAccountAccessSchema.extend(smsAccountFields);

export const smsChannelSchema = channelAccessSchema.safeExtend({
  ...smsAccountFields,
  allowFrom: smsAllowListSchema.default([]),
  webhookPath: smsAccountFields.webhookPath.unwrap().default(SMS_DEFAULT_WEBHOOK_PATH),
  dangerouslyDisableSignatureValidation: z.boolean().default(false),
  textChunkLimit: z.number().int().min(100).max(TWILIO_MAX_BODY_CHARS).default(1500),
  apiBaseUrl: z.url().default("https://api.twilio.com"),
  mediaMaxMb: z.number().positive().default(5),
  messageSidRetentionDays: z.number().int().min(2).max(3650).default(365),
  accounts: z.record(z.string(), smsAccountSchema).optional(),
});
export type SmsChannelConfig = z.infer<typeof smsChannelSchema>;

/** The settings in force for one account: its block over the root (every key it sets replaces the root's). */
export type SmsAccount = MergedAccount<SmsChannelConfig>;

export function smsAccount(sms: SmsChannelConfig, accountId: string): SmsAccount {
  return mergedAccount(sms, accountId, { mergeObjects: false });
}

/** Enabled accounts by `webhookPath`; a second account on a path already taken is not served (`onClash`). */
export function smsWebhookAccounts(
  sms: SmsChannelConfig,
  onClash?: ClashHandler,
): Map<string, SmsAccount> {
  return webhookAccounts(
    sms,
    (accountId) => smsAccount(sms, accountId),
    (account) => account.webhookPath,
    onClash,
  );
}

/** The account a reply route names, if `channels.sms` has it. */
export function smsAccountIn(sms: SmsChannelConfig, accountId: string): SmsAccount | undefined {
  if (sms.accounts && !(accountId in sms.accounts) && accountId !== defaultAccountId(sms))
    return undefined;
  return smsAccount(sms, accountId);
}

/** Credentials and sender of one account, resolved against the Worker env. */
export interface SmsSecrets {
  accountSid?: string;
  authToken?: string;
  fromNumber?: string;
  messagingServiceSid?: string;
  publicWebhookUrl?: string;
  signatureValidationDisabled: boolean;
}

/** The env variables that stand in for the default account's settings (credentials.ts lists the secrets among them). */
export const SMS_ENV = {
  accountSid: ["TWILIO_ACCOUNT_SID"],
  authToken: ["TWILIO_AUTH_TOKEN"],
  fromNumber: ["TWILIO_PHONE_NUMBER", "TWILIO_SMS_FROM"],
  messagingServiceSid: ["TWILIO_MESSAGING_SERVICE_SID"],
} as const;

export function smsSecrets(account: SmsAccount, env: SecretEnv): SmsSecrets {
  const fallback = defaultAccountEnv(account, env);
  return {
    accountSid: resolveSecret(account.accountSid, env) ?? fallback(...SMS_ENV.accountSid),
    authToken: resolveSecret(account.authToken, env) ?? fallback(...SMS_ENV.authToken),
    fromNumber: resolveSecret(account.fromNumber, env) ?? fallback(...SMS_ENV.fromNumber),
    messagingServiceSid:
      resolveSecret(account.messagingServiceSid, env) ?? fallback(...SMS_ENV.messagingServiceSid),
    publicWebhookUrl:
      account.publicWebhookUrl ?? validPublicUrl(fallback("SMS_PUBLIC_WEBHOOK_URL")),
    signatureValidationDisabled:
      account.dangerouslyDisableSignatureValidation ||
      fallback("SMS_DANGEROUSLY_DISABLE_SIGNATURE_VALIDATION") === "true",
  };
}

function validPublicUrl(value: string | undefined): string | undefined {
  return value !== undefined && publicUrlSchema.safeParse(value).success ? value : undefined;
}

/** Where status callbacks for an account's outbound messages arrive: its webhook path + `/status`. */
export function statusCallbackPath(webhookPath: string): string {
  return `${webhookPath.replace(/\/+$/, "")}/status`;
}
