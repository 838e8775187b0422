import * as z from "zod";
import { channelAccessSchema, channelAccountAccessSchema } from "../../config/channel-access.ts";
import {
  resolveSecret,
  secretEnvName,
  secretInputSchema,
  type SecretEnv,
} from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  enabledAccounts,
  mergedAccount,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.mattermost` with OpenClaw's key names and defaults (channels/mattermost,
 * gateway/config-channels). The access keys come from the shared channelAccessSchema; `accounts.<id>`
 * blocks take the same keys without defaults and inherit the root (`mattermostAccount`).
 *
 * `chatmode` decides channel behaviour: `oncall` (default) answers @-mentions, `onmessage` every
 * message, `onchar` messages that start with one of `oncharPrefixes` (an @-mention still counts).
 * `requireMention` still applies and wins over chatmode where it is set; `groups.<id>.requireMention`
 * wins over both (access.ts reads it first). So the schema resolves the effective
 * `requireMention` once: the block's own value, else `chatmode !== "onmessage"`.
 */

export const mattermostReplyToModeSchema = z.enum(["off", "first", "all", "batched"]);
export type MattermostReplyToMode = z.infer<typeof mattermostReplyToModeSchema>;
const chatmodeSchema = z.enum(["oncall", "onmessage", "onchar"]);

const streamingSchema = z
  .object({
    mode: z.enum(["off", "partial", "block", "progress"]).default("partial"),
    chunkMode: z.enum(["length", "newline"]).default("length"),
  })
  .loose();

/** OpenClaw's `true | false | "auto"`; "auto" resolves to off for Mattermost. */
const nativeSwitchSchema = z.union([z.boolean(), z.literal("auto")]);
const callbackPathSchema = z
  .string()
  .regex(/^\/[A-Za-z0-9/_.-]*$/, "a path starting with /")
  .max(200);
export const DEFAULT_COMMAND_CALLBACK_PATH = "/api/channels/mattermost/command";

/** Keys an account may set; every one optional (unset = the root's value). */
const mattermostAccountFields = {
  name: z.string().optional(),
  botToken: secretInputSchema.optional(),
  /** The server, e.g. https://chat.example.com; a trailing /api/v4 is removed. */
  baseUrl: z.url().optional(),
  chatmode: chatmodeSchema.optional(),
  oncharPrefixes: z.array(z.string().min(1).max(8)).optional(),
  replyToMode: mattermostReplyToModeSchema.optional(),
  replyToModeByChatType: z
    .object({
      direct: mattermostReplyToModeSchema.optional(),
      group: mattermostReplyToModeSchema.optional(),
      channel: mattermostReplyToModeSchema.optional(),
    })
    .strict()
    .optional(),
  implicitMentions: z.object({ threadParticipation: z.boolean().optional() }).loose().optional(),
  /** `@username` in allowlists matches only with this on (usernames can be changed). */
  dangerouslyAllowNameMatching: z.boolean().optional(),
  textChunkLimit: z.number().int().min(100).max(16_383).optional(),
  streaming: streamingSchema.optional(),
  /** Requests to a private, loopback, link-local or internal server are refused unless this is on (a LAN/tailnet Mattermost). */
  network: z.object({ dangerouslyAllowPrivateNetwork: z.boolean().optional() }).strict().optional(),
  commands: z
    .object({
      native: nativeSwitchSchema.optional(),
      nativeSkills: nativeSwitchSchema.optional(),
      callbackPath: callbackPathSchema.optional(),
      callbackUrl: z.url().optional(),
    })
    .strict()
    .optional(),
  interactions: z
    .object({
      callbackBaseUrl: z.url().optional(),
      /** Addresses (or CIDR ranges) button callbacks may come from; unset = loopback only. */
      allowedSourceIps: z.array(z.string().min(2).max(64)).max(64).optional(),
    })
    .strict()
    .optional(),
};

export const mattermostAccountSchema = channelAccountAccessSchema.extend(mattermostAccountFields);

const mattermostRootSchema = channelAccessSchema.safeExtend({
  ...mattermostAccountFields,
  chatmode: chatmodeSchema.default("oncall"),
  oncharPrefixes: z.array(z.string().min(1).max(8)).default([">", "!"]),
  replyToMode: mattermostReplyToModeSchema.default("off"),
  implicitMentions: z
    .object({ threadParticipation: z.boolean().default(true) })
    .loose()
    .prefault({}),
  dangerouslyAllowNameMatching: z.boolean().default(false),
  // Mattermost's own post limit is 16,383 characters; OpenClaw chunks at 4000.
  textChunkLimit: z.number().int().min(100).max(16_383).default(4000),
  streaming: streamingSchema.prefault({}),
  network: z
    .object({ dangerouslyAllowPrivateNetwork: z.boolean().default(false) })
    .strict()
    .prefault({}),
  commands: z
    .object({
      native: nativeSwitchSchema.default("auto"),
      nativeSkills: nativeSwitchSchema.default("auto"),
      callbackPath: callbackPathSchema.default(DEFAULT_COMMAND_CALLBACK_PATH),
      callbackUrl: z.url().optional(),
    })
    .strict()
    .prefault({}),
  accounts: z.record(z.string(), mattermostAccountSchema).optional(),
});

/** Fills an unset `requireMention` from `chatmode` (root, and each account that sets a chatmode), before validation. */
function requireMentionFromChatmode(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  const fill = (block: Record<string, unknown>, chatmode: unknown) =>
    block.requireMention === undefined && chatmode !== undefined
      ? { ...block, requireMention: chatmode !== "onmessage" }
      : block;
  const accounts = isPlainObject(raw.accounts)
    ? Object.fromEntries(
        Object.entries(raw.accounts).map(([id, account]) => [
          id,
          isPlainObject(account) ? fill(account, account.chatmode) : account,
        ]),
      )
    : raw.accounts;
  return {
    ...fill(raw, raw.chatmode ?? "oncall"),
    ...(accounts === undefined ? {} : { accounts }),
  };
}

export const mattermostChannelSchema = z.preprocess(
  requireMentionFromChatmode,
  mattermostRootSchema,
);
export type MattermostChannelConfig = z.output<typeof mattermostChannelSchema>;

/** The settings in force for one account: its block over the root (objects merged one level deep; `groups` and SecretRefs replaced whole). */
export type MattermostAccount = MergedAccount<MattermostChannelConfig>;

export function mattermostAccount(
  root: MattermostChannelConfig,
  accountId: string,
): MattermostAccount {
  return mergedAccount(root, accountId, {
    replace: ["groups"],
    replaceWhen: (value) => "source" in value,
  });
}

/** Enabled accounts of an enabled channel (all are served over the companion's WebSocket). */
export function mattermostAccounts(root: MattermostChannelConfig): MattermostAccount[] {
  return enabledAccounts(root, (accountId) => mattermostAccount(root, accountId));
}

/** The env variables that stand in for the default account's server and token (credentials.ts lists them too). */
export const MATTERMOST_ENV = {
  baseUrl: "MATTERMOST_URL",
  botToken: "MATTERMOST_BOT_TOKEN",
} as const;

/** The server root (no trailing slash, no /api/v4), or undefined when none is configured. */
export function mattermostBaseUrl(account: MattermostAccount, env: SecretEnv): string | undefined {
  // MATTERMOST_URL / MATTERMOST_BOT_TOKEN stand in for the default account only; the config always wins.
  const raw = account.baseUrl ?? defaultAccountEnv(account, env)(MATTERMOST_ENV.baseUrl);
  return raw?.replace(/\/+$/, "").replace(/\/api\/v4$/, "");
}

export function mattermostBotToken(account: MattermostAccount, env: SecretEnv): string | undefined {
  return (
    resolveSecret(account.botToken, env) ?? defaultAccountEnv(account, env)(MATTERMOST_ENV.botToken)
  );
}

/** The env var the companion reads the bot token from (never the token itself). */
export function mattermostBotTokenEnv(account: MattermostAccount): string | undefined {
  if (account.botToken !== undefined) return secretEnvName(account.botToken);
  return account.isDefault ? MATTERMOST_ENV.botToken : undefined;
}

/** Whether this account may reach a server on a private or internal address (network.dangerouslyAllowPrivateNetwork, account over root). */
export function mattermostAllowsPrivateNetwork(account: MattermostAccount): boolean {
  return account.network?.dangerouslyAllowPrivateNetwork === true;
}

/** Native slash commands (`commands.native`) are on only when set to true: "auto" means off on Mattermost. */
export function mattermostNativeCommands(account: MattermostAccount): boolean {
  return account.commands?.native === true;
}

export function replyToModeFor(
  account: MattermostAccount,
  chatType: "direct" | "group" | "channel",
): MattermostReplyToMode {
  // Direct messages stay flat unless replyToModeByChatType.direct says otherwise (channels/mattermost).
  return (
    account.replyToModeByChatType?.[chatType] ??
    (chatType === "direct" ? "off" : account.replyToMode)
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
