import * as z from "zod";

/**
 * The parts of a Bot Framework activity (Bot Framework Activity schema, as Teams sends it) the
 * Worker reads. Everything else is kept loose: Microsoft adds fields.
 */

export const channelAccountSchema = z
  .object({
    id: z.string().min(1).max(512),
    name: z.string().max(512).optional(),
    aadObjectId: z.string().max(128).optional(),
    role: z.string().optional(),
  })
  .loose();

const entitySchema = z
  .object({
    type: z.string(),
    mentioned: channelAccountSchema.optional(),
    text: z.string().max(2000).optional(),
  })
  .loose();

const attachmentSchema = z
  .object({
    contentType: z.string().max(200),
    contentUrl: z.string().max(4000).optional(),
    name: z.string().max(500).optional(),
    content: z.unknown().optional(),
  })
  .loose();

export const activitySchema = z
  .object({
    type: z.string().min(1).max(64),
    id: z.string().min(1).max(512).optional(),
    timestamp: z.string().optional(),
    serviceUrl: z.string().min(1).max(2000),
    channelId: z.string().optional(),
    from: channelAccountSchema,
    recipient: channelAccountSchema,
    conversation: z
      .object({
        id: z.string().min(1).max(1024),
        conversationType: z.string().optional(),
        tenantId: z.string().optional(),
        isGroup: z.boolean().optional(),
      })
      .loose(),
    replyToId: z.string().max(512).optional(),
    text: z.string().max(200_000).optional(),
    textFormat: z.string().optional(),
    entities: z.array(entitySchema).max(100).optional(),
    attachments: z.array(attachmentSchema).max(32).optional(),
    membersAdded: z.array(channelAccountSchema).max(500).optional(),
    membersRemoved: z.array(channelAccountSchema).max(500).optional(),
    reactionsAdded: z
      .array(z.object({ type: z.string().max(64) }).loose())
      .max(50)
      .optional(),
    reactionsRemoved: z
      .array(z.object({ type: z.string().max(64) }).loose())
      .max(50)
      .optional(),
    name: z.string().max(200).optional(),
    value: z.unknown().optional(),
    channelData: z
      .object({
        tenant: z.object({ id: z.string() }).loose().optional(),
        team: z.object({ id: z.string() }).loose().optional(),
        eventType: z.string().max(100).optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type Activity = z.infer<typeof activitySchema>;
