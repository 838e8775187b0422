import * as z from "zod";
import { channelAccessSchema, channelAccountAccessSchema } from "../../config/channel-access.ts";
import { enabledAccounts, mergedAccount, type MergedAccount } from "../accounts.ts";

/**
 * `channels.whatsapp` with OpenClaw's key names and defaults (channels/whatsapp): WhatsApp Web
 * through Baileys as a linked device, run by the companion (functions/channels/whatsapp/companion/).
 * Root and `accounts.<id>` take the same keys; an account inherits what it leaves unset, and its
 * `groups` / `direct` maps replace the root's whole (OpenClaw's shallow override).
 *
 * `allowFrom` / `groupAllowFrom` take E.164 numbers, normalised here ("+1 555-123 4567" →
 * "+15551234567"), which is how parse.ts names a sender. `authDir` is accepted and not used: the
 * linked session (Baileys' creds and Signal keys) lives in the Worker's companion state, fenced by
 * the companion's lease, never on a local disk that a rollout could roll back.
 * `pairingPhoneNumber` is edgeclaw's own: while unlinked, the connector asks WhatsApp for an
 * 8-character pairing code for that number instead of showing QR codes.
 */

const e164 = z.string().regex(/^\+[1-9]\d{6,14}$/, "an E.164 phone number, e.g. +15551234567");

const streamingSchema = z
  .object({ chunkMode: z.enum(["length", "newline"]).default("length") })
  .loose();

const reactionLevelSchema = z.enum(["off", "ack", "minimal", "extensive"]);
const replyToModeSchema = z.enum(["off", "first", "all", "batched"]);
export type WhatsAppReplyToMode = z.infer<typeof replyToModeSchema>;

const actionsSchema = z
  .object({
    reactions: z.boolean().optional(),
    polls: z.boolean().optional(),
    calls: z.boolean().optional(),
  })
  .loose();

const promptMapSchema = z.record(
  z.string(),
  z.object({ systemPrompt: z.string().optional() }).loose(),
);

/** Keys an account may set; every one optional (unset = the root's value). */
const whatsappAccountFields = {
  name: z.string().optional(),
  authDir: z.string().optional(),
  pairingPhoneNumber: e164.optional(),
  sendReadReceipts: z.boolean().optional(),
  selfChatMode: z.boolean().optional(),
  responsePrefix: z.string().max(200).optional(),
  reactionLevel: reactionLevelSchema.optional(),
  replyToMode: replyToModeSchema.optional(),
  textChunkLimit: z.number().int().min(100).max(65_536).optional(),
  streaming: streamingSchema.optional(),
  mediaMaxMb: z.number().positive().max(2048).optional(),
  actions: actionsSchema.optional(),
  configWrites: z.boolean().optional(),
  defaultTo: z.string().optional(),
  direct: promptMapSchema.optional(),
  pluginHooks: z.object({ messageReceived: z.boolean().optional() }).loose().optional(),
};

export const whatsappAccountSchema = channelAccountAccessSchema.extend(whatsappAccountFields);

const whatsappRootSchema = channelAccessSchema.safeExtend({
  ...whatsappAccountFields,
  sendReadReceipts: z.boolean().default(true),
  selfChatMode: z.boolean().default(false),
  reactionLevel: reactionLevelSchema.default("minimal"),
  replyToMode: replyToModeSchema.default("off"),
  textChunkLimit: z.number().int().min(100).max(65_536).default(4000),
  streaming: streamingSchema.prefault({}),
  mediaMaxMb: z.number().positive().max(2048).default(50),
  configWrites: z.boolean().default(true),
  accounts: z.record(z.string(), whatsappAccountSchema).optional(),
});

/** "+1 (555) 123-4567", "15551234567", "whatsapp:+1555…" → "+15551234567"; "*" and other forms as written. */
export function normalizePhone(entry: unknown): unknown {
  if (typeof entry === "number") entry = String(entry);
  if (typeof entry !== "string") return entry;
  const bare = entry.trim().replace(/^whatsapp:/i, "");
  if (!/^\+?[\d\s().-]+$/.test(bare)) return entry;
  const digits = bare.replace(/\D/g, "");
  return digits ? `+${digits}` : entry;
}

/** Numbers in `allowFrom` / `groupAllowFrom` onto E.164 (root and each account), before validation. */
function phonesToE164(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  const lift = (block: Record<string, unknown>): Record<string, unknown> => {
    const out = { ...block };
    for (const key of ["allowFrom", "groupAllowFrom"] as const)
      if (Array.isArray(block[key])) out[key] = block[key].map(normalizePhone);
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

export const whatsappChannelSchema = z.preprocess(phonesToE164, whatsappRootSchema);
export type WhatsAppChannelConfig = z.output<typeof whatsappChannelSchema>;

/** The settings in force for one account: its block over the root (`groups`, `direct` replaced whole). */
export type WhatsAppAccount = MergedAccount<WhatsAppChannelConfig>;

export function whatsappAccount(root: WhatsAppChannelConfig, accountId: string): WhatsAppAccount {
  return mergedAccount(root, accountId, { replace: ["groups", "direct"] });
}

/** Enabled accounts of an enabled channel: each is one linked device the companion runs. */
export function whatsappAccounts(root: WhatsAppChannelConfig): WhatsAppAccount[] {
  return enabledAccounts(root, (accountId) => whatsappAccount(root, accountId));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
