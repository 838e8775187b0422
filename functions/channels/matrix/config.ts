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
 * `channels.matrix` with OpenClaw's key names and defaults (channels/matrix). OpenClaw keeps the DM
 * keys under `dm` (`dm.policy`, `dm.allowFrom`, `dm.enabled`) and calls the room allowlist
 * `groups` (legacy alias `rooms`); the shared access layer reads `dmPolicy`, `allowFrom` and
 * `groups`, so `dmKeysToAccess` copies them there before validation (`dm.enabled: false` is
 * dmPolicy "disabled"). Root and `accounts.<id>` alike; an account inherits what it leaves unset.
 *
 * Served: unencrypted rooms and DMs over `/sync` in the companion, replies over the client-server
 * API from the Worker. `encryption: true` is accepted and refused at start (socket.ts): end-to-end
 * encrypted rooms are a separate step, and their events are skipped (companion/connector.ts).
 * Login is by access token; `password` login is not done here (docs/channels/matrix.md says how
 * to get a token).
 */

const threadRepliesSchema = z.enum(["off", "inbound", "always"]);
export type MatrixThreadReplies = z.infer<typeof threadRepliesSchema>;
const replyToModeSchema = z.enum(["off", "first", "all", "batched"]);
export type MatrixReplyToMode = z.infer<typeof replyToModeSchema>;
const autoJoinSchema = z.enum(["off", "allowlist", "always"]);
/** `!roomId:server`, `#alias:server` or `*`; a plain room name is refused (OpenClaw does the same). */
const inviteTargetSchema = z
  .string()
  .regex(/^(\*|[!#][^:\s]+:\S+)$/, "a room id (!room:server), an alias (#alias:server) or *");

const dmSchema = z
  .object({
    enabled: z.boolean().optional(),
    policy: z.enum(["pairing", "allowlist", "open", "disabled"]).optional(),
    allowFrom: z.array(z.string()).optional(),
    sessionScope: z.enum(["per-user", "per-room"]).optional(),
    threadReplies: threadRepliesSchema.optional(),
  })
  .loose();

const streamingSchema = z
  .object({
    /** Matrix reply streaming is opt-in in OpenClaw; edgeclaw sends finished replies only. */
    mode: z.enum(["off", "partial", "quiet", "progress"]).default("off"),
    chunkMode: z.enum(["length", "newline"]).default("length"),
  })
  .loose();

/** Keys an account may set; every one optional (unset = the root's value). */
const matrixAccountFields = {
  name: z.string().optional(),
  /** The homeserver's client-server API base, e.g. https://matrix.example.org. */
  homeserver: z.url().optional(),
  accessToken: secretInputSchema.optional(),
  /** The bot's full user id (@bot:example.org); the companion checks it against whoami. */
  userId: z
    .string()
    .regex(/^@[^:\s]+:\S+$/, "a full Matrix user id, @user:server")
    .optional(),
  password: secretInputSchema.optional(),
  deviceId: z.string().optional(),
  deviceName: z.string().optional(),
  initialSyncLimit: z.number().int().nonnegative().max(1000).optional(),
  encryption: z.boolean().optional(),
  autoJoin: autoJoinSchema.optional(),
  autoJoinAllowlist: z.array(inviteTargetSchema).optional(),
  dm: dmSchema.optional(),
  rooms: z.record(z.string(), z.unknown()).optional(),
  replyToMode: replyToModeSchema.optional(),
  threadReplies: threadRepliesSchema.optional(),
  reactionNotifications: z.enum(["own", "off"]).optional(),
  dangerouslyAllowNameMatching: z.boolean().optional(),
  textChunkLimit: z.number().int().min(100).max(60_000).optional(),
  streaming: streamingSchema.optional(),
  mediaMaxMb: z.number().positive().optional(),
  network: z.object({ dangerouslyAllowPrivateNetwork: z.boolean().optional() }).strict().optional(),
};

export const matrixAccountSchema = channelAccountAccessSchema.extend(matrixAccountFields);

const matrixRootSchema = channelAccessSchema.safeExtend({
  ...matrixAccountFields,
  initialSyncLimit: z.number().int().nonnegative().max(1000).default(0),
  encryption: z.boolean().default(false),
  autoJoin: autoJoinSchema.default("off"),
  autoJoinAllowlist: z.array(inviteTargetSchema).default([]),
  dm: dmSchema.prefault({}),
  replyToMode: replyToModeSchema.default("off"),
  // OpenClaw: "off" unless set; the top level resolves to "inbound".
  threadReplies: threadRepliesSchema.default("inbound"),
  reactionNotifications: z.enum(["own", "off"]).default("own"),
  dangerouslyAllowNameMatching: z.boolean().default(false),
  textChunkLimit: z.number().int().min(100).max(60_000).default(4000),
  streaming: streamingSchema.prefault({}),
  mediaMaxMb: z.number().positive().default(20),
  network: z
    .object({ dangerouslyAllowPrivateNetwork: z.boolean().default(false) })
    .strict()
    .prefault({}),
  accounts: z.record(z.string(), matrixAccountSchema).optional(),
});

/** `dm.policy` / `dm.allowFrom` / `dm.enabled` and `rooms` onto the keys the access layer reads (root and each account). */
function dmKeysToAccess(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  const lift = (block: Record<string, unknown>): Record<string, unknown> => {
    const out = { ...block };
    const dm = isPlainObject(block.dm) ? block.dm : undefined;
    if (dm?.policy !== undefined && out.dmPolicy === undefined) out.dmPolicy = dm.policy;
    if (dm?.allowFrom !== undefined && out.allowFrom === undefined) out.allowFrom = dm.allowFrom;
    if (dm?.enabled === false) out.dmPolicy = "disabled";
    if (isPlainObject(block.rooms) && out.groups === undefined) out.groups = block.rooms;
    return out;
  };
  const accounts = isPlainObject(raw.accounts)
    ? Object.fromEntries(
        Object.entries(raw.accounts).map(([id, account]) => [
          id,
          isPlainObject(account) ? lift(account) : account,
        ]),
      )
    : raw.accounts;
  return { ...lift(raw), ...(accounts === undefined ? {} : { accounts }) };
}

export const matrixChannelSchema = z.preprocess(dmKeysToAccess, matrixRootSchema);
export type MatrixChannelConfig = z.output<typeof matrixChannelSchema>;

/** The settings in force for one account: its block over the root (`groups` and SecretRefs replaced whole). */
export type MatrixAccount = MergedAccount<MatrixChannelConfig>;

export function matrixAccount(root: MatrixChannelConfig, accountId: string): MatrixAccount {
  return mergedAccount(root, accountId, {
    replace: ["groups", "rooms", "autoJoinAllowlist"],
    replaceWhen: (value) => "source" in value,
  });
}

/** Enabled accounts of an enabled channel (all are served over the companion's /sync). */
export function matrixAccounts(root: MatrixChannelConfig): MatrixAccount[] {
  return enabledAccounts(root, (accountId) => matrixAccount(root, accountId));
}

/** The env variables that stand in for the default account's settings (OpenClaw's MATRIX_*). */
export const MATRIX_ENV = {
  homeserver: "MATRIX_HOMESERVER",
  accessToken: "MATRIX_ACCESS_TOKEN",
  userId: "MATRIX_USER_ID",
} as const;

/** The homeserver root (no trailing slash, no /_matrix/client…), or undefined when none is configured. */
export function matrixHomeserver(account: MatrixAccount, env: SecretEnv): string | undefined {
  const raw = account.homeserver ?? defaultAccountEnv(account, env)(MATRIX_ENV.homeserver);
  return raw?.replace(/\/+$/, "").replace(/\/_matrix(\/client)?(\/v3)?$/, "");
}

export function matrixAccessToken(account: MatrixAccount, env: SecretEnv): string | undefined {
  return (
    resolveSecret(account.accessToken, env) ??
    defaultAccountEnv(account, env)(MATRIX_ENV.accessToken)
  );
}

/** The env var the companion reads the access token from (never the token itself). */
export function matrixAccessTokenEnv(account: MatrixAccount): string | undefined {
  if (account.accessToken !== undefined) return secretEnvName(account.accessToken);
  return account.isDefault ? MATRIX_ENV.accessToken : undefined;
}

export function matrixAllowsPrivateNetwork(account: MatrixAccount): boolean {
  return account.network?.dangerouslyAllowPrivateNetwork === true;
}

/** Where a reply goes in a conversation of this type: `dm.threadReplies` overrides `threadReplies` for DMs. */
export function threadRepliesFor(account: MatrixAccount, direct: boolean): MatrixThreadReplies {
  return (direct ? account.dm?.threadReplies : undefined) ?? account.threadReplies;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
