import * as z from "zod";

/**
 * The parts of a Google Chat interaction event the Worker reads (Chat API reference: Event,
 * Message, Space, User, Annotation). Everything else is kept loose: Google adds fields.
 */

export const chatUserSchema = z
  .object({
    name: z.string().min(1),
    displayName: z.string().optional(),
    type: z.enum(["HUMAN", "BOT", "TYPE_UNSPECIFIED"]).optional(),
  })
  .loose();

export const chatSpaceSchema = z
  .object({
    name: z.string().regex(/^spaces\/[^/]+$/),
    /** Deprecated field, still sent: "DM" or "ROOM". */
    type: z.string().optional(),
    spaceType: z.string().optional(),
    singleUserBotDm: z.boolean().optional(),
    displayName: z.string().optional(),
  })
  .loose();

const annotationSchema = z
  .object({
    type: z.string(),
    userMention: z.object({ user: chatUserSchema, type: z.string().optional() }).loose().optional(),
  })
  .loose();

const attachmentSchema = z
  .object({
    name: z.string().optional(),
    contentName: z.string().optional(),
    contentType: z.string().optional(),
    attachmentDataRef: z.object({ resourceName: z.string().optional() }).loose().optional(),
    source: z.string().optional(),
  })
  .loose();

export const chatMessageSchema = z
  .object({
    name: z.string().regex(/^spaces\/[^/]+\/messages\/[^/]+$/),
    sender: chatUserSchema,
    text: z.string().max(200_000).optional(),
    argumentText: z.string().max(200_000).optional(),
    thread: z.object({ name: z.string().optional() }).loose().optional(),
    annotations: z.array(annotationSchema).max(200).optional(),
    attachment: z.array(attachmentSchema).max(32).optional(),
    createTime: z.string().optional(),
  })
  .loose();

export const chatEventSchema = z
  .object({
    type: z.string().min(1),
    eventTime: z.string().optional(),
    space: chatSpaceSchema,
    user: chatUserSchema.optional(),
    message: chatMessageSchema.optional(),
    /** CARD_CLICKED: the button's function and parameters. */
    action: z
      .object({
        actionMethodName: z.string().optional(),
        parameters: z.array(z.object({ key: z.string(), value: z.string() }).loose()).optional(),
      })
      .loose()
      .optional(),
    common: z.object({ invokedFunction: z.string().optional() }).loose().optional(),
  })
  .loose();
export type ChatEvent = z.infer<typeof chatEventSchema>;
export type ChatMessage = z.infer<typeof chatMessageSchema>;
