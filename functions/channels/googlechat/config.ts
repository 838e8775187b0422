import * as z from "zod";
import { channelAccessSchema, channelAccountAccessSchema } from "../../config/channel-access.ts";
import {
  resolveSecret,
  secretInputSchema,
  type SecretEnv,
  type SecretInput,
} from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  mergedAccount,
  webhookAccounts,
  type ClashHandler,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.googlechat` with OpenClaw's key names and defaults (channels/googlechat): the shared
 * access keys (dmPolicy "pairing", groupPolicy "allowlist", groups."spaces/<id>".{enabled,
 * requireMention, users}, …) plus Google Chat's own. `accounts.<id>` blocks take the same keys
 * without defaults and inherit the root. The env fallback GOOGLE_CHAT_SERVICE_ACCOUNT (the key file's
 * JSON) applies to the default account only.
 *
 * Not taken from OpenClaw: `serviceAccountFile` (a Worker has no file system; the config check says
 * what to use instead) and Workspace add-on events (`appPrincipal`: tokens in the body), which this
 * Worker does not accept. edgeclaw keys: `apiBaseUrl`, `tokenUrl`, `oidcJwksUrl`, `chatJwksUrl`
 * (sovereign setups, proxies, tests).
 */

const pathSchema = z
  .string()
  .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" });

/** Google Chat refuses a message text longer than this (spaces.messages.create). */
export const GOOGLECHAT_TEXT_LIMIT = 4096;

const noFiles = z
  .unknown()
  .optional()
  .refine((value) => value === undefined, {
    message:
      'a Worker has no file system: put the key JSON in a secret and use serviceAccount: { source: "env", id: "GOOGLE_CHAT_SERVICE_ACCOUNT" }',
  });

const accountFields = {
  /** The service account's JSON key: a SecretRef (recommended), the JSON text or the object itself. */
  serviceAccount: z.union([secretInputSchema, z.record(z.string(), z.unknown())]).optional(),
  serviceAccountFile: noFiles,
  /** How Google Chat signs its requests: an ID token for the endpoint URL, or a JWT for the project number. */
  audienceType: z.enum(["app-url", "project-number"]).optional(),
  /** The endpoint URL (app-url) or the Cloud project number (project-number), exactly as in the Chat app's settings. */
  audience: z.string().min(1).optional(),
  webhookPath: pathSchema.optional(),
  /** The app's own user (`users/123…`): a USER_MENTION of it is a mention. */
  botUser: z
    .string()
    .regex(/^users\/[^/]+$/, { message: 'expected "users/<id>"' })
    .optional(),
  allowBots: z.boolean().optional(),
  /** `message` posts "_… is typing..._" and edits it into the reply; `reaction` needs user OAuth and falls back to `message`. */
  typingIndicator: z.enum(["message", "none", "reaction"]).optional(),
  mediaMaxMb: z.number().positive().optional(),
  textChunkLimit: z.number().int().min(100).max(GOOGLECHAT_TEXT_LIMIT).optional(),
  chunkMode: z.enum(["length", "newline"]).optional(),
  apiBaseUrl: z.url().optional(),
  tokenUrl: z.url().optional(),
  oidcJwksUrl: z.url().optional(),
  chatJwksUrl: z.url().optional(),
};

export const googleChatAccountSchema = channelAccountAccessSchema.extend(accountFields);

export const googleChatChannelSchema = channelAccessSchema.safeExtend({
  ...accountFields,
  webhookPath: pathSchema.default("/googlechat"),
  allowBots: z.boolean().default(false),
  typingIndicator: z.enum(["message", "none", "reaction"]).default("message"),
  mediaMaxMb: z.number().positive().default(20),
  textChunkLimit: z
    .number()
    .int()
    .min(100)
    .max(GOOGLECHAT_TEXT_LIMIT)
    .default(GOOGLECHAT_TEXT_LIMIT),
  chunkMode: z.enum(["length", "newline"]).default("length"),
  apiBaseUrl: z.url().default("https://chat.googleapis.com/"),
  tokenUrl: z.url().default("https://oauth2.googleapis.com/token"),
  oidcJwksUrl: z.url().default("https://www.googleapis.com/oauth2/v3/certs"),
  chatJwksUrl: z
    .url()
    .default(
      "https://www.googleapis.com/service_accounts/v1/metadata/jwk/chat@system.gserviceaccount.com",
    ),
  accounts: z.record(z.string(), googleChatAccountSchema).optional(),
});
export type GoogleChatChannelConfig = z.infer<typeof googleChatChannelSchema>;
/** The settings in force for one account: its block over the root (`groups` and the service account key replaced whole). */
export type GoogleChatAccount = MergedAccount<GoogleChatChannelConfig>;

export function googleChatAccount(
  chat: GoogleChatChannelConfig,
  accountId: string,
): GoogleChatAccount {
  return mergedAccount(chat, accountId, { replace: ["groups", "serviceAccount"] });
}

/** Enabled accounts by `webhookPath`; a second account on a path already taken is not served (`onClash`). */
export function googleChatWebhookAccounts(
  chat: GoogleChatChannelConfig,
  onClash?: ClashHandler,
): Map<string, GoogleChatAccount> {
  return webhookAccounts(
    chat,
    (accountId) => googleChatAccount(chat, accountId),
    (account) => account.webhookPath,
    onClash,
  );
}

/** The parts of a service account key the Worker uses. */
export const serviceAccountKeySchema = z
  .object({
    client_email: z.string().min(3),
    private_key: z.string().includes("PRIVATE KEY"),
    token_uri: z.url().optional(),
  })
  .loose();
export type ServiceAccountKey = z.infer<typeof serviceAccountKeySchema>;

/** The env variable that stands in for the default account's service account key (credentials.ts lists it too). */
export const GOOGLE_CHAT_SERVICE_ACCOUNT_ENV = "GOOGLE_CHAT_SERVICE_ACCOUNT";

/** The account's service account key (config first; GOOGLE_CHAT_SERVICE_ACCOUNT for the default account), or why not. */
export function googleChatServiceAccount(
  account: GoogleChatAccount,
  env: SecretEnv,
): { key: ServiceAccountKey } | { error: string } {
  let raw: unknown =
    isPlainObject(account.serviceAccount) && !("source" in account.serviceAccount)
      ? account.serviceAccount
      : resolveSecret(account.serviceAccount as SecretInput | undefined, env);
  raw ??= defaultAccountEnv(account, env)(GOOGLE_CHAT_SERVICE_ACCOUNT_ENV);
  if (raw === undefined)
    return {
      error: `no service account for Google Chat account ${account.accountId} (set channels.googlechat.serviceAccount or GOOGLE_CHAT_SERVICE_ACCOUNT)`,
    };
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      return {
        error: `the Google Chat service account of account ${account.accountId} is not JSON`,
      };
    }
  }
  const parsed = serviceAccountKeySchema.safeParse(raw);
  return parsed.success
    ? { key: parsed.data }
    : {
        error: `the Google Chat service account of account ${account.accountId} lacks client_email or private_key`,
      };
}

export function withTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
