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
 * `channels.line` with OpenClaw's key names and defaults (channels/line): the shared access keys
 * (dmPolicy "pairing", groupPolicy "allowlist", groupAllowFrom, groups.<id>.{allowFrom, enabled,
 * requireMention}, …) plus LINE's own. `accounts.<id>` blocks take the same keys without defaults
 * and inherit the root; each has its own `webhookPath` and secrets. Env fallbacks
 * (LINE_CHANNEL_ACCESS_TOKEN, LINE_CHANNEL_SECRET) apply to the default account only.
 *
 * Not taken from OpenClaw: `tokenFile` / `secretFile` (a Worker has no file system: the config check
 * refuses them and says what to use instead), and the edgeclaw keys `apiBaseUrl` / `dataApiBaseUrl`
 * (proxies, tests), `replyTokenMaxAgeSeconds` and `loadingSeconds`.
 */

const pathSchema = z
  .string()
  .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" });

/** LINE's own limit on one text message (Messaging API reference, text message). */
export const LINE_TEXT_LIMIT = 5000;
/** Messages one reply or push call may carry. */
export const LINE_MESSAGES_PER_CALL = 5;

const noFiles = z
  .unknown()
  .optional()
  .refine((value) => value === undefined, {
    message:
      'a Worker has no file system: use { source: "env", id: "…" } and `wrangler secret put`',
  });

/**
 * The SessionDO keeps a settled event's dedup key 48 h (durable-objects/session/storage.ts
 * TOMBSTONE_MS); an accepted event must be older than the age limit before its record goes.
 */
export const LINE_EVENT_MAX_AGE_CAP_SECONDS = 47 * 60 * 60;

const lineAccountFields = {
  channelAccessToken: secretInputSchema.optional(),
  channelSecret: secretInputSchema.optional(),
  tokenFile: noFiles,
  secretFile: noFiles,
  webhookPath: pathSchema.optional(),
  /** Messaging API base (reply, push, loading animation). */
  apiBaseUrl: z.url().optional(),
  /** Content API base (downloads of what users send). */
  dataApiBaseUrl: z.url().optional(),
  textChunkLimit: z.number().int().min(100).max(LINE_TEXT_LIMIT).optional(),
  chunkMode: z.enum(["length", "newline"]).optional(),
  mediaMaxMb: z.number().positive().optional(),
  /**
   * How long a signed link to a file the bot sends stays good. LINE's app fetches an image or an
   * audio file from that link when the user opens the chat (and keeps it a while after), so a
   * link that is too short shows a broken image to someone who reads late.
   */
  mediaUrlTtlHours: z.number().positive().max(720).optional(),
  /**
   * A reply token is single use and short-lived (LINE: about a minute). Past this age the reply
   * goes out by push instead, so a token is never tried at the edge of its life.
   */
  replyTokenMaxAgeSeconds: z.number().int().min(0).max(60).optional(),
  /**
   * Events whose signed `timestamp` is older than this are refused (nothing stored): a captured
   * request stays validly signed forever, and the dedup record that makes a replay a duplicate is
   * kept 48 h, so the window must end before that record goes. LINE publishes no count or interval
   * for its opt-in webhook redelivery; a day covers a long outage of the Worker.
   */
  eventMaxAgeSeconds: z.number().int().min(60).max(LINE_EVENT_MAX_AGE_CAP_SECONDS).optional(),
  /** Loading animation length in 1:1 chats (LINE: 5–60, a multiple of 5); 0 turns it off. */
  loadingSeconds: z
    .number()
    .int()
    .min(0)
    .max(60)
    .refine((n) => n % 5 === 0, { message: "a multiple of 5 (LINE's rule)" })
    .optional(),
};

export const lineAccountSchema = channelAccountAccessSchema.extend(lineAccountFields);

export const lineChannelSchema = channelAccessSchema.safeExtend({
  ...lineAccountFields,
  webhookPath: pathSchema.default("/line/webhook"),
  apiBaseUrl: z.url().default("https://api.line.me/"),
  dataApiBaseUrl: z.url().default("https://api-data.line.me/"),
  textChunkLimit: z.number().int().min(100).max(LINE_TEXT_LIMIT).default(LINE_TEXT_LIMIT),
  chunkMode: z.enum(["length", "newline"]).default("length"),
  mediaMaxMb: z.number().positive().default(10),
  mediaUrlTtlHours: z.number().positive().max(720).default(168),
  replyTokenMaxAgeSeconds: z.number().int().min(0).max(60).default(50),
  eventMaxAgeSeconds: z
    .number()
    .int()
    .min(60)
    .max(LINE_EVENT_MAX_AGE_CAP_SECONDS)
    .default(24 * 60 * 60),
  loadingSeconds: lineAccountFields.loadingSeconds.unwrap().default(20),
  accounts: z.record(z.string(), lineAccountSchema).optional(),
});
export type LineChannelConfig = z.infer<typeof lineChannelSchema>;

/** The settings in force for one account: its block over the root (objects merged one level deep, `groups` replaced). */
export type LineAccount = MergedAccount<LineChannelConfig>;

export function lineAccount(line: LineChannelConfig, accountId: string): LineAccount {
  return mergedAccount(line, accountId, { replace: ["groups"] });
}

/** Enabled accounts by `webhookPath`; a second account on a path already taken is not served (`onClash`). */
export function lineWebhookAccounts(
  line: LineChannelConfig,
  onClash?: ClashHandler,
): Map<string, LineAccount> {
  return webhookAccounts(
    line,
    (accountId) => lineAccount(line, accountId),
    (account) => account.webhookPath,
    onClash,
  );
}

/** The env variables that stand in for the default account's secrets (credentials.ts lists them too). */
export const LINE_ENV = {
  channelAccessToken: "LINE_CHANNEL_ACCESS_TOKEN",
  channelSecret: "LINE_CHANNEL_SECRET",
} as const;

/**
 * The account's secrets: the config value (a SecretRef or a literal) wins; the env variables
 * LINE_CHANNEL_ACCESS_TOKEN / LINE_CHANNEL_SECRET stand in for the default account only.
 */
export function lineSecrets(
  account: LineAccount,
  env: SecretEnv,
): { accessToken?: string; channelSecret?: string } {
  const fallback = defaultAccountEnv(account, env);
  return {
    accessToken:
      resolveSecret(account.channelAccessToken, env) ?? fallback(LINE_ENV.channelAccessToken),
    channelSecret: resolveSecret(account.channelSecret, env) ?? fallback(LINE_ENV.channelSecret),
  };
}

export function withTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}
