import * as z from "zod";

/**
 * The parts of Discord's Gateway and interaction payloads edgeclaw reads
 * (https://discord.com/developers/docs/events/gateway-events, …/resources/message). Loose: Discord
 * adds fields freely; only what the parser depends on is checked.
 */

const snowflake = z.string().regex(/^\d{1,25}$/);

export const discordUserSchema = z
  .object({
    id: snowflake,
    username: z.string().optional(),
    global_name: z.string().nullish(),
    bot: z.boolean().optional(),
    system: z.boolean().optional(),
  })
  .loose();
export type DiscordUser = z.infer<typeof discordUserSchema>;

const memberSchema = z
  .object({
    nick: z.string().nullish(),
    roles: z.array(z.string()).optional(),
    user: discordUserSchema.optional(),
  })
  .loose();

export const discordAttachmentSchema = z
  .object({
    id: z.string(),
    filename: z.string(),
    content_type: z.string().optional(),
    size: z.number().int().nonnegative(),
    url: z.string(),
  })
  .loose();

export const discordMessageSchema = z
  .object({
    id: snowflake,
    channel_id: snowflake,
    guild_id: snowflake.optional(),
    author: discordUserSchema,
    member: memberSchema.optional(),
    content: z.string().default(""),
    type: z.number().int().default(0),
    edited_timestamp: z.string().nullish(),
    mentions: z.array(discordUserSchema.partial({ username: true })).default([]),
    mention_roles: z.array(z.string()).default([]),
    mention_everyone: z.boolean().default(false),
    attachments: z.array(discordAttachmentSchema).default([]),
    webhook_id: z.string().optional(),
    referenced_message: z
      .object({ id: snowflake, author: discordUserSchema.optional() })
      .loose()
      .nullish(),
    nonce: z.union([z.string(), z.number()]).optional(),
  })
  .loose();
export type DiscordMessage = z.infer<typeof discordMessageSchema>;

/** MESSAGE_UPDATE carries a partial message: an embed unfurl has no author and no edited_timestamp. */
export const discordMessageUpdateSchema = z
  .object({
    id: snowflake,
    channel_id: snowflake,
    guild_id: snowflake.optional(),
    author: discordUserSchema.optional(),
    member: memberSchema.optional(),
    content: z.string().optional(),
    edited_timestamp: z.string().nullish(),
  })
  .loose();

export const discordReactionSchema = z
  .object({
    user_id: snowflake,
    channel_id: snowflake,
    message_id: snowflake,
    guild_id: snowflake.optional(),
    member: memberSchema.optional(),
    message_author_id: snowflake.optional(),
    emoji: z.object({ id: z.string().nullish(), name: z.string().nullish() }).loose(),
  })
  .loose();

export const discordMemberAddSchema = z
  .object({
    guild_id: snowflake,
    user: discordUserSchema,
    nick: z.string().nullish(),
    joined_at: z.string().optional(),
  })
  .loose();

/**
 * One Gateway dispatch as the companion forwards it: `{ op: 0, t, s, d }` unchanged, plus `context`,
 * what the connector learnt from earlier dispatches of the same Gateway session (a message does not
 * say whether its channel is a thread, nor which role Discord manages for the bot).
 */
export const discordDispatchSchema = z
  .object({
    op: z.literal(0),
    t: z.string(),
    s: z.number().int().nullish(),
    d: z.unknown(),
    context: z
      .object({
        channel: z
          .object({
            id: snowflake,
            type: z.number().int(),
            parent_id: snowflake.nullish(),
            name: z.string().optional(),
          })
          .loose()
          .optional(),
        botRoleIds: z.array(z.string()).optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type DiscordDispatch = z.infer<typeof discordDispatchSchema>;

/** Channel types that are threads (public, private, announcement thread). */
export const THREAD_CHANNEL_TYPES: ReadonlySet<number> = new Set([10, 11, 12]);
/** DM = 1, group DM = 3. */
export const GROUP_DM_CHANNEL_TYPE = 3;

const commandOptionSchema: z.ZodType<{
  name: string;
  type: number;
  value?: unknown;
  options?: unknown[];
}> = z
  .object({
    name: z.string(),
    type: z.number().int(),
    value: z.unknown().optional(),
    options: z.array(z.lazy(() => commandOptionSchema)).optional(),
  })
  .loose();

export const discordInteractionSchema = z
  .object({
    id: snowflake,
    application_id: snowflake,
    type: z.number().int(),
    token: z.string().min(1).max(1000),
    guild_id: snowflake.optional(),
    channel_id: snowflake.optional(),
    channel: z
      .object({ id: snowflake, type: z.number().int(), parent_id: snowflake.nullish() })
      .loose()
      .optional(),
    member: memberSchema.optional(),
    user: discordUserSchema.optional(),
    data: z
      .object({
        id: z.string().optional(),
        name: z.string().optional(),
        type: z.number().int().optional(),
        options: z.array(commandOptionSchema).optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type DiscordInteraction = z.infer<typeof discordInteractionSchema>;
