import * as z from "zod";
import { urlOnAllowlist } from "../../http/host-allowlist.ts";
import {
  channelAccessSchema,
  channelAccountAccessSchema,
  groupEntrySchema,
} from "../../config/channel-access.ts";
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
 * `channels.msteams` with OpenClaw's key names and defaults (channels/msteams): the shared access
 * keys (dmPolicy "pairing", groupPolicy "allowlist", requireMention true, groups keyed by the
 * conversation id `19:…@thread.tacv2` without `;messageid=`), the bot credentials `appId`,
 * `appPassword`, `tenantId` (env fallbacks MSTEAMS_APP_ID / MSTEAMS_APP_PASSWORD / MSTEAMS_TENANT_ID,
 * default account only), `webhook.path` (default /api/messages), `textChunkLimit` (4000, also the
 * hard cap), `replyStyle` (no default: see parse.ts), `teams` (per team / channel), `mediaMaxMb` (20), `mediaAllowHosts` / `mediaAuthAllowHosts` (inbound
 * downloads; files.ts), `streaming`.
 *
 * Not taken from OpenClaw: `webhook.port` (a Worker has no port; accepted and ignored),
 * `authType: "federated"` with certificates / managed identity (no file system, no Azure IMDS in a
 * Worker: refused by the config check). edgeclaw keys: `appType` (SingleTenant when a tenant is
 * set), `openIdMetadataUrl`, `loginBaseUrl`, `serviceUrlAllowlist` (sovereign clouds, tests).
 */

const pathSchema = z
  .string()
  .regex(/^\/[\w\-./]*$/, { message: "expected a path starting with /" });

/** Teams refuses longer message text; OpenClaw caps textChunkLimit here too. */
export const MSTEAMS_TEXT_LIMIT = 4000;

/**
 * Hosts a reply may be sent to: the token only ever goes to these. `*.` matches any subdomain; an
 * entry with a scheme (`http://127.0.0.1:8787`) matches that exact origin (local fakes).
 * Public cloud (smba.trafficmanager.net, *.botframework.com), GCC / GCC High / DoD
 * (smba.infra.gcc.teams.microsoft.com, *.botframework.us, *.botframework.azure.us,
 * *.infra.dod.teams.microsoft.us, *.infra.gov.teams.microsoft.us).
 */
export const DEFAULT_SERVICE_URL_HOSTS = [
  "smba.trafficmanager.net",
  "*.botframework.com",
  "smba.infra.gcc.teams.microsoft.com",
  "*.botframework.us",
  "*.botframework.azure.us",
  "*.infra.dod.teams.microsoft.us",
  "*.infra.gov.teams.microsoft.us",
];

/**
 * `streaming` (OpenClaw concepts/streaming; Teams defaults to "partial"): partial → personal chats
 * stream natively (typing activities with streaminfo), groups and channels show a posted message
 * edited in place; progress → personal chats show Teams' informative progress bar with tool steps;
 * block and off → replies arrive whole. `chunkMode` as `chunkMode` at the root (which it overrides).
 */
export const msTeamsStreamingSchema = z
  .object({
    mode: z.enum(["off", "partial", "block", "progress"]).default("partial"),
    chunkMode: z.enum(["length", "newline"]).optional(),
    progress: z
      .object({ toolProgress: z.boolean().default(true) })
      .loose()
      .prefault({}),
  })
  .loose();

/** Inbound attachments are downloaded only from these (OpenClaw `mediaAllowHosts`; `["*"]`-style wildcards as `*.host`). */
export const DEFAULT_MEDIA_HOSTS = [
  ...DEFAULT_SERVICE_URL_HOSTS,
  "graph.microsoft.com",
  "graph.microsoft.us",
  "dod-graph.microsoft.us",
  "*.sharepoint.com",
  "*.sharepoint.us",
  "*.sharepoint-df.com",
  "*.1drv.ms",
  "*.onedrive.com",
  "*.teams.microsoft.com",
  "*.teams.microsoft.us",
  "*.asm.skype.com",
  "*.media.azure.net",
];

/** Hosts a download may be retried at with the bot's token after a 401/403 (OpenClaw `mediaAuthAllowHosts`: Graph + Bot Framework). */
export const DEFAULT_MEDIA_AUTH_HOSTS = [
  ...DEFAULT_SERVICE_URL_HOSTS,
  "graph.microsoft.com",
  "graph.microsoft.us",
  "dod-graph.microsoft.us",
];

const federatedRefused = z
  .unknown()
  .optional()
  .refine((value) => value === undefined || value === false, {
    message:
      "a Worker has no file system or managed identity: use appPassword (a client secret) in a secret",
  });

/**
 * `teams.<teamId>` and `teams.<teamId>.channels.<channelId>` (keys: the team's and channel's
 * conversation ids, `19:…@thread.tacv2`): requireMention and replyStyle per team and channel, read
 * channel → team → account; the map is an allowlist like Discord's guilds (config/guild-access.ts).
 * `tools.allow` / `tools.deny` narrow the tools of runs there (agent/tools/conversation-policy.ts);
 * `tools.alsoAllow` and `toolsBySender` are accepted for OpenClaw configs but not applied.
 */
const teamsChannelEntrySchema = groupEntrySchema.extend({
  replyStyle: z.enum(["thread", "top-level"]).optional(),
  tools: z
    .object({
      allow: z.array(z.string()).optional(),
      deny: z.array(z.string()).optional(),
      alsoAllow: z.array(z.string()).optional(),
    })
    .loose()
    .optional(),
  toolsBySender: z.record(z.string(), z.unknown()).optional(),
});
export const msTeamsTeamsSchema = z.record(
  z.string(),
  teamsChannelEntrySchema.extend({
    channels: z.record(z.string(), teamsChannelEntrySchema).optional(),
  }),
);

const accountFields = {
  appId: secretInputSchema.optional(),
  appPassword: secretInputSchema.optional(),
  tenantId: secretInputSchema.optional(),
  /** SingleTenant: tokens from the tenant; MultiTenant: from botframework.com. Default: SingleTenant when tenantId is set. */
  appType: z.enum(["SingleTenant", "MultiTenant"]).optional(),
  authType: z.enum(["secret"]).optional(),
  certificatePath: federatedRefused,
  useManagedIdentity: federatedRefused,
  webhook: z.object({ path: pathSchema.optional(), port: z.number().int().optional() }).optional(),
  replyStyle: z.enum(["thread", "top-level"]).optional(),
  allowBots: z.boolean().optional(),
  /** Post a typing activity when a run starts. */
  typingIndicator: z.boolean().optional(),
  mediaMaxMb: z.number().positive().optional(),
  textChunkLimit: z.number().int().min(100).max(MSTEAMS_TEXT_LIMIT).optional(),
  chunkMode: z.enum(["length", "newline"]).optional(),
  streaming: z
    .object({
      mode: z.enum(["off", "partial", "block", "progress"]).optional(),
      chunkMode: z.enum(["length", "newline"]).optional(),
      progress: z.object({ toolProgress: z.boolean().optional() }).loose().optional(),
    })
    .loose()
    .optional(),
  openIdMetadataUrl: z.url().optional(),
  loginBaseUrl: z.url().optional(),
  serviceUrlAllowlist: z.array(z.string().min(1)).optional(),
  mediaAllowHosts: z.array(z.string().min(1)).optional(),
  mediaAuthAllowHosts: z.array(z.string().min(1)).optional(),
  teams: msTeamsTeamsSchema.optional(),
};

export const msTeamsAccountSchema = channelAccountAccessSchema.extend(accountFields);

export const msTeamsChannelSchema = channelAccessSchema.safeExtend({
  ...accountFields,
  webhook: z
    .object({ path: pathSchema.default("/api/messages"), port: z.number().int().optional() })
    .default({ path: "/api/messages" }),
  allowBots: z.boolean().default(false),
  typingIndicator: z.boolean().default(true),
  mediaMaxMb: z.number().positive().default(20),
  textChunkLimit: z.number().int().min(100).max(MSTEAMS_TEXT_LIMIT).default(MSTEAMS_TEXT_LIMIT),
  chunkMode: z.enum(["length", "newline"]).default("length"),
  streaming: msTeamsStreamingSchema.prefault({}),
  openIdMetadataUrl: z
    .url()
    .default("https://login.botframework.com/v1/.well-known/openidconfiguration"),
  loginBaseUrl: z.url().default("https://login.microsoftonline.com"),
  serviceUrlAllowlist: z.array(z.string().min(1)).default(DEFAULT_SERVICE_URL_HOSTS),
  mediaAllowHosts: z.array(z.string().min(1)).default(DEFAULT_MEDIA_HOSTS),
  mediaAuthAllowHosts: z.array(z.string().min(1)).default(DEFAULT_MEDIA_AUTH_HOSTS),
  accounts: z.record(z.string(), msTeamsAccountSchema).optional(),
});
export type MsTeamsChannelConfig = z.infer<typeof msTeamsChannelSchema>;
/** The settings in force for one account: its block over the root (objects merged one level deep; `groups` and SecretRefs replaced). */
export type MsTeamsAccount = MergedAccount<MsTeamsChannelConfig>;

export function msTeamsAccount(teams: MsTeamsChannelConfig, accountId: string): MsTeamsAccount {
  return mergedAccount(teams, accountId, {
    replace: ["groups", "teams"],
    replaceWhen: (value) => "source" in value,
  });
}

/** Enabled accounts by `webhook.path`; a second account on a path already taken is not served (`onClash`). */
export function msTeamsWebhookAccounts(
  teams: MsTeamsChannelConfig,
  onClash?: ClashHandler,
): Map<string, MsTeamsAccount> {
  return webhookAccounts(
    teams,
    (accountId) => msTeamsAccount(teams, accountId),
    (account) => account.webhook.path ?? "/api/messages",
    onClash,
  );
}

export interface MsTeamsCredentials {
  appId: string;
  appPassword?: string;
  tenantId?: string;
  appType: "SingleTenant" | "MultiTenant";
}

/** The env variables that stand in for the default account's credentials (credentials.ts lists them too). */
export const MSTEAMS_ENV = {
  appId: "MSTEAMS_APP_ID",
  appPassword: "MSTEAMS_APP_PASSWORD",
  tenantId: "MSTEAMS_TENANT_ID",
} as const;

/** The bot's credentials (config first; MSTEAMS_* env for the default account), or why not. */
export function msTeamsCredentials(
  account: MsTeamsAccount,
  env: SecretEnv,
): MsTeamsCredentials | { error: string } {
  const fallback = defaultAccountEnv(account, env);
  const read = (input: SecretInput | undefined, envName: string) =>
    resolveSecret(input, env) ?? fallback(envName);
  const appId = read(account.appId, MSTEAMS_ENV.appId);
  if (!appId)
    return {
      error: `no appId for Microsoft Teams account ${account.accountId} (set channels.msteams.appId or MSTEAMS_APP_ID)`,
    };
  const tenantId = read(account.tenantId, MSTEAMS_ENV.tenantId);
  const appType = account.appType ?? (tenantId ? "SingleTenant" : "MultiTenant");
  if (appType === "SingleTenant" && !tenantId)
    return {
      error: `Microsoft Teams account ${account.accountId} is SingleTenant but has no tenantId`,
    };
  return {
    appId,
    appPassword: read(account.appPassword, MSTEAMS_ENV.appPassword),
    tenantId,
    appType,
  };
}

/** Whether a reply may go to `serviceUrl` (the bot's token is sent with it). */
export function serviceUrlAllowed(serviceUrl: string, allowlist: readonly string[]): boolean {
  return urlOnAllowlist(serviceUrl, allowlist);
}
