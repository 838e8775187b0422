import * as z from "zod";

/**
 * Event bodies Feishu posts (Open Platform "Event subscription" — schema 2.0; im.message.receive_v1;
 * im.chat.member.bot.added_v1 / deleted_v1), read loosely: unknown fields pass; unknown event types
 * are recognised by `header.event_type` and dropped by the parser.
 */

const idSchema = z.string().min(1).max(128);

export const userIdsSchema = z
  .object({
    open_id: idSchema.optional(),
    user_id: z.string().max(128).nullish(),
    union_id: z.string().max(128).nullish(),
  })
  .loose();

export const eventHeaderSchema = z
  .object({
    event_id: idSchema,
    event_type: z.string().min(1).max(128),
    create_time: z.string().max(20).optional(),
    app_id: z.string().max(128).optional(),
    tenant_key: z.string().max(128).optional(),
  })
  .loose();

export const eventEnvelopeSchema = z
  .object({
    schema: z.literal("2.0"),
    header: eventHeaderSchema,
    event: z.record(z.string(), z.unknown()),
  })
  .loose();

export const mentionSchema = z
  .object({
    key: z.string().max(64),
    id: userIdsSchema.optional(),
    name: z.string().max(256).optional(),
    tenant_key: z.string().optional(),
  })
  .loose();

export const messageReceiveSchema = z
  .object({
    sender: z
      .object({
        sender_id: userIdsSchema.optional(),
        sender_type: z.string().max(32).optional(),
        tenant_key: z.string().optional(),
      })
      .loose(),
    message: z
      .object({
        message_id: idSchema,
        root_id: z.string().max(128).nullish(),
        parent_id: z.string().max(128).nullish(),
        thread_id: z.string().max(128).nullish(),
        chat_id: idSchema,
        chat_type: z.string().max(32),
        message_type: z.string().max(64),
        content: z.string().max(200_000),
        mentions: z.array(mentionSchema).max(100).nullish(),
        create_time: z.string().max(20).optional(),
      })
      .loose(),
  })
  .loose();
export type FeishuMessageEvent = z.infer<typeof messageReceiveSchema>;
export type FeishuMention = z.infer<typeof mentionSchema>;

export const botMembershipSchema = z
  .object({
    chat_id: idSchema,
    operator_id: userIdsSchema.optional(),
    name: z.string().max(256).optional(),
    external: z.boolean().optional(),
  })
  .loose();

/** `content` of a text message. */
export const textContentSchema = z.object({ text: z.string() }).loose();

const postElementSchema = z
  .object({
    tag: z.string(),
    text: z.string().optional(),
    href: z.string().optional(),
    user_id: z.string().optional(),
    user_name: z.string().optional(),
    image_key: z.string().optional(),
    file_key: z.string().optional(),
    language: z.string().optional(),
  })
  .loose();
export type FeishuPostElement = z.infer<typeof postElementSchema>;

/** A post's body: `{title, content: [[element…]…]}`; sometimes keyed by locale (`zh_cn`, `en_us`). */
export const postBodySchema = z
  .object({ title: z.string().nullish(), content: z.array(z.array(postElementSchema)).max(2000) })
  .loose();

export const imageContentSchema = z.object({ image_key: z.string().min(1).max(256) }).loose();
export const fileContentSchema = z
  .object({ file_key: z.string().min(1).max(256), file_name: z.string().max(1000).optional() })
  .loose();
