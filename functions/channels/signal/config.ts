import * as z from "zod";
import { channelAccessSchema, channelAccountAccessSchema } from "../../config/channel-access.ts";
import type { SecretEnv } from "../../config/secret-ref.ts";
import {
  defaultAccountEnv,
  enabledAccounts,
  mergedAccount,
  type MergedAccount,
} from "../accounts.ts";

/**
 * `channels.signal` with OpenClaw's key names and defaults (channels/signal). The bot is one
 * signal-cli account (`account`, E.164) reached through signal-cli's HTTP daemon (JSON-RPC at
 * `/api/v1/rpc`), which runs beside the companion: `transport.kind` "managed-native" (default: the
 * companion starts `signal-cli daemon --http` itself) or "external-native" (a daemon already
 * running at `transport.url`). "container" (bbernhard/signal-cli-rest-api's REST + WebSocket) is
 * accepted and refused at start (socket.ts): edgeclaw speaks the native JSON-RPC daemon only.
 * OpenClaw's older flat keys `httpUrl`, `httpHost`, `httpPort` and `cliPath` are read as the
 * transport's when the block has no `transport`.
 *
 * Each named account owns its transport: `accounts.<id>` does not inherit the root's `transport`,
 * which belongs to the default account only (OpenClaw's rule).
 */

const replyToModeSchema = z.enum(["off", "first", "all", "batched"]);
export type SignalReplyToMode = z.infer<typeof replyToModeSchema>;

/** An E.164 number, as signal-cli names accounts. */
const e164Schema = z.string().regex(/^\+[1-9]\d{5,14}$/, "an E.164 phone number, +15551234567");

export const transportSchema = z
  .object({
    kind: z.enum(["managed-native", "external-native", "container"]).default("managed-native"),
    /** The daemon's base URL; required for external-native (and container). */
    url: z.url().optional(),
    cliPath: z.string().min(1).default("signal-cli"),
    configPath: z.string().min(1).optional(),
    httpHost: z.string().min(1).default("127.0.0.1"),
    httpPort: z.number().int().min(1).max(65_535).default(8080),
    startupTimeoutMs: z.number().int().min(1000).max(120_000).default(30_000),
    /** edgeclaw always receives with `manual` (an awaited `receive` poll); "on-start" is refused at start. */
    receiveMode: z.enum(["on-start", "manual"]).default("manual"),
    ignoreStories: z.boolean().default(true),
  })
  .strict();
export type SignalTransport = z.infer<typeof transportSchema>;

const streamingSchema = z
  .object({ chunkMode: z.enum(["length", "newline"]).default("length") })
  .loose();

/** Keys an account may set; every one optional (unset = the root's value, `transport` excepted). */
const signalAccountFields = {
  name: z.string().optional(),
  account: e164Schema.optional(),
  /** The bot's ACI (uuid), for native @mentions by uuid and the own-message loop guard. */
  accountUuid: z.string().min(1).max(64).optional(),
  transport: z.unknown().optional(),
  httpUrl: z.url().optional(),
  httpHost: z.string().optional(),
  httpPort: z.number().int().optional(),
  cliPath: z.string().optional(),
  ignoreAttachments: z.boolean().optional(),
  sendReadReceipts: z.boolean().optional(),
  replyToMode: replyToModeSchema.optional(),
  replyToModeByChatType: z
    .object({ direct: replyToModeSchema.optional(), group: replyToModeSchema.optional() })
    .strict()
    .optional(),
  textChunkLimit: z.number().int().min(100).max(60_000).optional(),
  streaming: streamingSchema.optional(),
  mediaMaxMb: z.number().positive().optional(),
  reactionLevel: z.enum(["off", "ack", "minimal", "extensive"]).optional(),
  reactionNotifications: z.enum(["off", "own", "all", "allowlist"]).optional(),
  reactionAllowlist: z.array(z.string()).optional(),
};

export const signalAccountSchema = channelAccountAccessSchema.extend(signalAccountFields);

const signalRootSchema = channelAccessSchema.safeExtend({
  ...signalAccountFields,
  ignoreAttachments: z.boolean().default(false),
  sendReadReceipts: z.boolean().default(false),
  replyToMode: replyToModeSchema.default("all"),
  textChunkLimit: z.number().int().min(100).max(60_000).default(4000),
  streaming: streamingSchema.prefault({}),
  mediaMaxMb: z.number().positive().default(8),
  reactionLevel: z.enum(["off", "ack", "minimal", "extensive"]).default("minimal"),
  reactionNotifications: z.enum(["off", "own", "all", "allowlist"]).default("own"),
  reactionAllowlist: z.array(z.string()).default([]),
  accounts: z.record(z.string(), signalAccountSchema).optional(),
});

/** `groups` keys as OpenClaw writes them (`group:<id>`, `signal:group:<id>`) → the raw group id. */
function groupKeysToIds(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const strip = (block: Record<string, unknown>): Record<string, unknown> => {
    const groups = block.groups;
    if (typeof groups !== "object" || groups === null || Array.isArray(groups)) return block;
    const keyed = Object.entries(groups).map(([key, entry]) => [
      key.replace(/^(signal:)?group:/, ""),
      entry,
    ]);
    return { ...block, groups: Object.fromEntries(keyed) };
  };
  const root = strip(raw as Record<string, unknown>);
  const accounts = root.accounts;
  if (typeof accounts !== "object" || accounts === null || Array.isArray(accounts)) return root;
  return {
    ...root,
    accounts: Object.fromEntries(
      Object.entries(accounts).map(([id, block]) => [
        id,
        typeof block === "object" && block !== null
          ? strip(block as Record<string, unknown>)
          : block,
      ]),
    ),
  };
}

const checkedRootSchema = signalRootSchema.superRefine((root, ctx) => {
  const blocks: Array<[Array<string | number>, Record<string, unknown>]> = [[[], root]];
  for (const [id, account] of Object.entries(root.accounts ?? {}))
    blocks.push([["accounts", id], account]);
  for (const [path, block] of blocks) {
    if (block.transport === undefined) continue;
    const parsed = transportSchema.safeParse(block.transport);
    if (!parsed.success)
      for (const issue of parsed.error.issues)
        ctx.addIssue({
          code: "custom",
          path: [...path, "transport", ...(issue.path as Array<string | number>)],
          message: issue.message,
        });
  }
});
export const signalChannelSchema = z.preprocess(groupKeysToIds, checkedRootSchema);
export type SignalChannelConfig = z.output<typeof signalChannelSchema>;

/** One account's settings in force; `transport` is the account's own, resolved with defaults. */
export type SignalAccount = MergedAccount<SignalChannelConfig> & { transport: SignalTransport };

export function signalAccount(root: SignalChannelConfig, accountId: string): SignalAccount {
  const merged = mergedAccount(root, accountId, {
    replace: ["groups"],
  });
  const own = root.accounts?.[accountId] as Record<string, unknown> | undefined;
  // The root's transport (and its flat keys) belong to the default account alone.
  const source: Record<string, unknown> =
    own && !merged.isDefault ? own : { ...(root as Record<string, unknown>), ...own };
  return { ...merged, transport: resolvedTransport(source) };
}

/** `transport`, else OpenClaw's flat keys (`httpUrl`, `httpHost`, `httpPort`, `cliPath`), with defaults. */
function resolvedTransport(block: Record<string, unknown>): SignalTransport {
  if (block.transport !== undefined) return transportSchema.parse(block.transport);
  const flat: Record<string, unknown> = {};
  if (typeof block.httpUrl === "string") {
    flat.kind = "external-native";
    flat.url = block.httpUrl;
  }
  if (typeof block.httpHost === "string") flat.httpHost = block.httpHost;
  if (typeof block.httpPort === "number") flat.httpPort = block.httpPort;
  if (typeof block.cliPath === "string") flat.cliPath = block.cliPath;
  return transportSchema.parse(flat);
}

export function signalAccounts(root: SignalChannelConfig): SignalAccount[] {
  return enabledAccounts(root, (accountId) => signalAccount(root, accountId));
}

/** The env variable that stands in for the default account's `account` (the bot's number). */
export const SIGNAL_ACCOUNT_ENV = "SIGNAL_ACCOUNT";

/** The bot's E.164 number: `account`, else SIGNAL_ACCOUNT for the default account. */
export function signalNumber(account: SignalAccount, env: SecretEnv): string | undefined {
  const number = account.account ?? defaultAccountEnv(account, env)(SIGNAL_ACCOUNT_ENV);
  return number && /^\+[1-9]\d{5,14}$/.test(number) ? number : undefined;
}

/** Where the companion reaches the daemon: `transport.url`, else the managed daemon's bind address. */
export function daemonUrl(transport: SignalTransport): string | undefined {
  if (transport.url) return transport.url.replace(/\/+$/, "");
  if (transport.kind !== "managed-native") return undefined;
  const host = transport.httpHost.includes(":") ? `[${transport.httpHost}]` : transport.httpHost;
  return `http://${host}:${transport.httpPort}`;
}

/** `replyToModeByChatType` over `replyToMode` for this kind of conversation. */
export function replyToModeFor(account: SignalAccount, group: boolean): SignalReplyToMode {
  return (
    (group ? account.replyToModeByChatType?.group : account.replyToModeByChatType?.direct) ??
    account.replyToMode
  );
}

/** The largest attachment the bot reads or sends, in bytes (`mediaMaxMb`). */
export function signalMediaMaxBytes(account: SignalAccount | undefined): number {
  return Math.floor((account?.mediaMaxMb ?? 8) * 1024 * 1024);
}
