import * as z from "zod";

/**
 * Who may talk to the agent on one channel: the per-channel / per-account access keys of OpenClaw
 * (channels/pairing, channels/groups, channels/access-groups), with OpenClaw's defaults.
 *
 * A channel's config block is `channelAccessSchema.extend({ ...platform keys })`; its
 * `accounts.<id>` blocks take the same keys WITHOUT defaults (`channelAccountAccessSchema`), because
 * an account inherits every key it does not set from the channel root (`effectiveChannelAccess`).
 *
 * Defaults: dmPolicy "pairing", groupPolicy "allowlist" (a missing channel block also means
 * allowlist: parse `{}`), requireMention true. historyLimit / dmHistoryLimit have no default here:
 * unset falls back to `messages.groupChat.historyLimit` (50) — see functions/routing/group-history.ts.
 */

export const dmPolicySchema = z.enum(["pairing", "allowlist", "open", "disabled"]);
export type DmPolicy = z.infer<typeof dmPolicySchema>;

export const groupPolicySchema = z.enum(["allowlist", "open", "disabled"]);
export type GroupPolicy = z.infer<typeof groupPolicySchema>;

/** Allowlist entries: platform ids, `<channel>:<id>`, `accessGroup:<name>` or `"*"`. Numbers (Telegram ids) become strings. */
export const allowListSchema = z.array(z.union([z.string().min(1), z.number().transform(String)]));

/**
 * `channels.<ch>.mentionPatterns`: scopes the regex mention fallback (`messages.groupChat.mentionPatterns`)
 * per conversation. `mode: "allow"` (default) enables it except in `denyIn`; `mode: "deny"` disables it
 * except in `allowIn`; `denyIn` wins when an id is in both.
 */
export const mentionPatternPolicySchema = z.object({
  mode: z.enum(["allow", "deny"]).default("allow"),
  allowIn: z.array(z.string()).default([]),
  denyIn: z.array(z.string()).default([]),
});
export type MentionPatternPolicy = z.infer<typeof mentionPatternPolicySchema>;

/** One entry of `groups.<id>` (or Slack's `channels.<id>`); the `"*"` key holds defaults for all groups. */
export const groupEntrySchema = z
  .object({
    enabled: z.boolean().optional(),
    /** Alias of `enabled` used by some channels (Slack `allow`). */
    allow: z.boolean().optional(),
    requireMention: z.boolean().optional(),
    /** Senders allowed to trigger in this group (on top of / instead of groupAllowFrom). */
    users: allowListSchema.optional(),
    allowFrom: allowListSchema.optional(),
    historyLimit: z.number().int().nonnegative().optional(),
    /** Messages from other bots in this group reach the agent (never the agent's own). */
    allowBots: z.boolean().optional(),
  })
  .loose();
export type GroupEntry = z.infer<typeof groupEntrySchema>;

const accessFields = {
  dmPolicy: dmPolicySchema,
  allowFrom: allowListSchema,
  groupPolicy: groupPolicySchema,
  groupAllowFrom: allowListSchema,
  groups: z.record(z.string(), groupEntrySchema),
  requireMention: z.boolean(),
  historyLimit: z.number().int().nonnegative(),
  dmHistoryLimit: z.number().int().nonnegative(),
  dms: z.record(
    z.string(),
    z.object({ historyLimit: z.number().int().nonnegative().optional() }).loose(),
  ),
  mentionPatterns: mentionPatternPolicySchema,
  allowBots: z.boolean(),
};

/** An `accounts.<id>` block: the same keys, all optional, no defaults (unset = inherit the root). */
export const channelAccountAccessSchema = z
  .object({
    enabled: z.boolean().optional(),
    dmPolicy: accessFields.dmPolicy.optional(),
    allowFrom: accessFields.allowFrom.optional(),
    groupPolicy: accessFields.groupPolicy.optional(),
    groupAllowFrom: accessFields.groupAllowFrom.optional(),
    groups: accessFields.groups.optional(),
    requireMention: accessFields.requireMention.optional(),
    historyLimit: accessFields.historyLimit.optional(),
    dmHistoryLimit: accessFields.dmHistoryLimit.optional(),
    dms: accessFields.dms.optional(),
    mentionPatterns: accessFields.mentionPatterns.optional(),
    allowBots: accessFields.allowBots.optional(),
  })
  .loose();
export type ChannelAccountAccess = z.infer<typeof channelAccountAccessSchema>;

/** The channel root block, with OpenClaw's defaults. Extend it for a concrete channel. */
export const channelAccessSchema = z
  .object({
    enabled: z.boolean().default(true),
    dmPolicy: accessFields.dmPolicy.default("pairing"),
    allowFrom: accessFields.allowFrom.default([]),
    groupPolicy: accessFields.groupPolicy.default("allowlist"),
    groupAllowFrom: accessFields.groupAllowFrom.optional(),
    groups: accessFields.groups.optional(),
    requireMention: accessFields.requireMention.default(true),
    historyLimit: accessFields.historyLimit.optional(),
    dmHistoryLimit: accessFields.dmHistoryLimit.optional(),
    dms: accessFields.dms.optional(),
    mentionPatterns: accessFields.mentionPatterns.optional(),
    /** Other bots' messages are dropped unless this is on (per account, or per group entry). */
    allowBots: accessFields.allowBots.default(false),
    /** Account used when an event names none (OpenClaw: `defaultAccount`, else `default`). */
    defaultAccount: z.string().optional(),
    accounts: z.record(z.string(), channelAccountAccessSchema).optional(),
  })
  .loose()
  .superRefine((block, ctx) => {
    checkOpenNeedsWildcard(block.dmPolicy, block.allowFrom, [], ctx);
    for (const [accountId, account] of Object.entries(block.accounts ?? {})) {
      const effective = mergeAccess(block, account);
      checkOpenNeedsWildcard(effective.dmPolicy, effective.allowFrom, ["accounts", accountId], ctx);
    }
  });
export type ChannelAccess = z.infer<typeof channelAccessSchema>;

function checkOpenNeedsWildcard(
  policy: DmPolicy,
  allowFrom: string[],
  path: string[],
  ctx: z.RefinementCtx,
): void {
  if (policy === "open" && !allowFrom.includes("*")) {
    ctx.addIssue({
      code: "custom",
      path: [...path, "allowFrom"],
      message: 'dmPolicy "open" requires "*" in allowFrom (otherwise use dmPolicy "allowlist")',
    });
  }
}

/** The access settings in force for one account: the account block over the channel root. */
export interface EffectiveChannelAccess {
  enabled: boolean;
  dmPolicy: DmPolicy;
  allowFrom: string[];
  groupPolicy: GroupPolicy;
  groupAllowFrom?: string[];
  groups?: Record<string, GroupEntry>;
  requireMention: boolean;
  historyLimit?: number;
  dmHistoryLimit?: number;
  dms?: Record<string, { historyLimit?: number }>;
  mentionPatterns?: MentionPatternPolicy;
  allowBots?: boolean;
}

type RootLike = Omit<EffectiveChannelAccess, never> & {
  accounts?: Record<string, ChannelAccountAccess>;
};

function mergeAccess(
  root: RootLike,
  account: ChannelAccountAccess | undefined,
): EffectiveChannelAccess {
  const pick = <K extends keyof EffectiveChannelAccess>(key: K): EffectiveChannelAccess[K] =>
    (account?.[key] !== undefined ? account[key] : root[key]) as EffectiveChannelAccess[K];
  return {
    enabled: pick("enabled"),
    dmPolicy: pick("dmPolicy"),
    allowFrom: pick("allowFrom"),
    groupPolicy: pick("groupPolicy"),
    groupAllowFrom: pick("groupAllowFrom"),
    groups: pick("groups"),
    requireMention: pick("requireMention"),
    historyLimit: pick("historyLimit"),
    dmHistoryLimit: pick("dmHistoryLimit"),
    dms: pick("dms"),
    mentionPatterns: pick("mentionPatterns"),
    allowBots: pick("allowBots"),
  };
}

/**
 * Access settings for `channels.<channel>` / account `accountId`, from the raw config value of the
 * channel block (`config.channels[channel]`, possibly undefined). A missing block yields the
 * defaults (pairing DMs, allowlisted groups with an empty allowlist = no group admitted). A block that
 * fails validation yields `disabled` for both DMs and groups: fail closed, never open.
 */
export function effectiveChannelAccess(
  channelBlock: unknown,
  accountId: string,
): EffectiveChannelAccess {
  const parsed = channelAccessSchema.safeParse(channelBlock ?? {});
  if (!parsed.success) {
    return {
      enabled: false,
      dmPolicy: "disabled",
      allowFrom: [],
      groupPolicy: "disabled",
      requireMention: true,
    };
  }
  const root = parsed.data;
  return mergeAccess(root, root.accounts?.[accountId]);
}
