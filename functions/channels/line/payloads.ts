import * as z from "zod";

/**
 * The webhook body LINE posts (Messaging API reference, "Webhook event objects"; the
 * line/line-openapi webhook.yml), read loosely: unknown fields pass, unknown event and message types
 * are recognised by `type` and dropped by the parser rather than failing the whole request.
 */

export const lineSourceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("user"), userId: z.string().min(1).max(100).optional() }).loose(),
  z
    .object({
      type: z.literal("group"),
      groupId: z.string().min(1).max(100),
      userId: z.string().min(1).max(100).optional(),
    })
    .loose(),
  z
    .object({
      type: z.literal("room"),
      roomId: z.string().min(1).max(100),
      userId: z.string().min(1).max(100).optional(),
    })
    .loose(),
]);
export type LineSource = z.infer<typeof lineSourceSchema>;

/** Fields every event has; the rest is read per type. */
export const lineEventBaseSchema = z
  .object({
    type: z.string().min(1).max(64),
    mode: z.enum(["active", "standby"]).default("active"),
    timestamp: z.number().int().nonnegative(),
    webhookEventId: z.string().min(1).max(128),
    deliveryContext: z.object({ isRedelivery: z.boolean() }).loose().optional(),
    source: lineSourceSchema.optional(),
    replyToken: z.string().min(1).max(256).optional(),
  })
  .loose();
export type LineEventBase = z.infer<typeof lineEventBaseSchema>;

export const lineWebhookBodySchema = z
  .object({
    destination: z.string().min(1).max(100),
    // Loose items here: one odd event must not reject its neighbours.
    events: z.array(z.record(z.string(), z.unknown())).max(100),
  })
  .loose();

const mentioneeSchema = z
  .object({
    type: z.string(),
    index: z.number().int().nonnegative(),
    length: z.number().int().nonnegative(),
    userId: z.string().optional(),
    isSelf: z.boolean().optional(),
  })
  .loose();

export const lineMessageSchema = z
  .object({
    id: z.string().min(1).max(64),
    type: z.string().min(1),
    text: z.string().max(20_000).optional(),
    mention: z
      .object({ mentionees: z.array(mentioneeSchema).max(100) })
      .loose()
      .optional(),
    quotedMessageId: z.string().optional(),
    fileName: z.string().max(1000).optional(),
    fileSize: z.number().int().nonnegative().optional(),
    duration: z.number().nonnegative().optional(),
    contentProvider: z.object({ type: z.string() }).loose().optional(),
    title: z.string().max(1000).optional(),
    address: z.string().max(1000).optional(),
    latitude: z.number().optional(),
    longitude: z.number().optional(),
    packageId: z.string().optional(),
    stickerId: z.string().optional(),
    keywords: z.array(z.string().max(100)).max(20).optional(),
  })
  .loose();
export type LineMessage = z.infer<typeof lineMessageSchema>;

export const lineMessageEventSchema = lineEventBaseSchema.extend({
  type: z.literal("message"),
  message: lineMessageSchema,
});
export const lineMembersEventSchema = lineEventBaseSchema.extend({
  joined: z
    .object({ members: z.array(z.object({ userId: z.string().optional() }).loose()).max(100) })
    .loose()
    .optional(),
  left: z
    .object({ members: z.array(z.object({ userId: z.string().optional() }).loose()).max(100) })
    .loose()
    .optional(),
});
export const linePostbackEventSchema = lineEventBaseSchema.extend({
  type: z.literal("postback"),
  postback: z
    .object({ data: z.string().max(10_000), params: z.record(z.string(), z.unknown()).optional() })
    .loose(),
});
export const lineUnsendEventSchema = lineEventBaseSchema.extend({
  type: z.literal("unsend"),
  unsend: z.object({ messageId: z.string() }).loose(),
});
export const lineFollowEventSchema = lineEventBaseSchema.extend({
  type: z.literal("follow"),
  follow: z.object({ isUnblocked: z.boolean() }).loose().optional(),
});
