import * as z from "zod";

/**
 * The parts of a Bot API `Update` (https://core.telegram.org/bots/api#update) edgeclaw reads, as
 * zod schemas. Loose: Telegram adds fields often, and an unknown field must never turn an update
 * into a 400 (Telegram would retry it until it gives up). Ids are numbers of up to 52 bits, safe in
 * a double; they become decimal strings in envelopes.
 */

const id = z.number().int();

export const telegramUserSchema = z
  .object({
    id,
    is_bot: z.boolean().default(false),
    first_name: z.string().default(""),
    last_name: z.string().optional(),
    username: z.string().optional(),
  })
  .loose();
export type TelegramUser = z.infer<typeof telegramUserSchema>;

export const telegramChatSchema = z
  .object({
    id,
    type: z.enum(["private", "group", "supergroup", "channel"]),
    title: z.string().optional(),
    username: z.string().optional(),
    is_forum: z.boolean().optional(),
  })
  .loose();
export type TelegramChat = z.infer<typeof telegramChatSchema>;

export const telegramEntitySchema = z
  .object({
    type: z.string(),
    offset: z.number().int().nonnegative(),
    length: z.number().int().nonnegative(),
    user: telegramUserSchema.optional(),
  })
  .loose();
export type TelegramEntity = z.infer<typeof telegramEntitySchema>;

const fileSchema = z
  .object({
    file_id: z.string().min(1),
    file_unique_id: z.string().optional(),
    file_size: z.number().int().nonnegative().optional(),
    file_name: z.string().optional(),
    mime_type: z.string().optional(),
  })
  .loose();
export type TelegramFile = z.infer<typeof fileSchema>;

/** A replied-to message: Telegram includes one level only. */
const repliedMessageSchema = z
  .object({
    message_id: id,
    from: telegramUserSchema.optional(),
    text: z.string().optional(),
    caption: z.string().optional(),
    forum_topic_created: z.unknown().optional(),
  })
  .loose();

export const telegramMessageSchema = z
  .object({
    message_id: id,
    message_thread_id: id.optional(),
    from: telegramUserSchema.optional(),
    sender_chat: telegramChatSchema.optional(),
    date: z.number().int(),
    edit_date: z.number().int().optional(),
    chat: telegramChatSchema,
    is_topic_message: z.boolean().optional(),
    reply_to_message: repliedMessageSchema.optional(),
    text: z.string().optional(),
    entities: z.array(telegramEntitySchema).optional(),
    caption: z.string().optional(),
    caption_entities: z.array(telegramEntitySchema).optional(),
    photo: z.array(fileSchema).optional(),
    document: fileSchema.optional(),
    audio: fileSchema.optional(),
    voice: fileSchema.optional(),
    video: fileSchema.optional(),
    video_note: fileSchema.optional(),
    sticker: fileSchema.extend({ emoji: z.string().optional() }).optional(),
    forum_topic_created: z.unknown().optional(),
  })
  .loose();
export type TelegramMessage = z.infer<typeof telegramMessageSchema>;

export const telegramCallbackQuerySchema = z
  .object({
    id: z.string().min(1),
    from: telegramUserSchema,
    /** Absent for buttons on inline-mode messages (no chat to answer in). */
    message: z
      .object({
        message_id: id,
        message_thread_id: id.optional(),
        chat: telegramChatSchema,
        is_topic_message: z.boolean().optional(),
      })
      .loose()
      .optional(),
    data: z.string().optional(),
    game_short_name: z.string().optional(),
  })
  .loose();
export type TelegramCallbackQuery = z.infer<typeof telegramCallbackQuerySchema>;

export const telegramUpdateSchema = z
  .object({
    update_id: z.number().int().nonnegative(),
    message: z.unknown().optional(),
    edited_message: z.unknown().optional(),
    channel_post: z.unknown().optional(),
    edited_channel_post: z.unknown().optional(),
    callback_query: z.unknown().optional(),
  })
  .loose();
export type TelegramUpdate = z.infer<typeof telegramUpdateSchema>;
