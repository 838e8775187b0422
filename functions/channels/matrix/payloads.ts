import * as z from "zod";

/**
 * What the companion's /sync connector forwards for one room event (companion/connector.ts): the
 * event as the homeserver served it in the room's timeline, the room it is in, and what the
 * connection knows that the event does not say — who the bot is (whoami), whether the room is a
 * DM (the bot's `m.direct` account data), and for a reaction who sent the event it annotates.
 * Only the fields the Worker reads are listed; the rest passes (`loose`).
 */

const relatesToSchema = z
  .object({
    rel_type: z.string().max(64).optional(),
    event_id: z.string().max(255).optional(),
    key: z.string().max(64).optional(),
    "m.in_reply_to": z
      .object({ event_id: z.string().max(255) })
      .loose()
      .optional(),
  })
  .loose();

export const matrixContentSchema = z
  .object({
    msgtype: z.string().max(64).optional(),
    body: z.string().max(200_000).optional(),
    format: z.string().max(64).optional(),
    formatted_body: z.string().max(400_000).optional(),
    url: z.string().max(2048).optional(),
    info: z
      .object({ mimetype: z.string().max(255).optional(), size: z.number().optional() })
      .loose()
      .optional(),
    "m.relates_to": relatesToSchema.optional(),
    "m.mentions": z
      .object({ user_ids: z.array(z.string().max(255)).max(100).optional() })
      .loose()
      .optional(),
    "m.new_content": z
      .object({ body: z.string().max(200_000).optional() })
      .loose()
      .optional(),
  })
  .loose();
export type MatrixContent = z.infer<typeof matrixContentSchema>;

export const matrixRoomEventSchema = z
  .object({
    event_id: z.string().min(1).max(255),
    type: z.string().min(1).max(255),
    sender: z.string().min(1).max(255),
    origin_server_ts: z.number().int().nonnegative().default(0),
    content: matrixContentSchema.default({}),
  })
  .loose();
export type MatrixRoomEvent = z.infer<typeof matrixRoomEventSchema>;

export const matrixSocketPayloadSchema = z.object({
  roomId: z.string().regex(/^![^:\s]+:\S+$/, "a room id, !room:server"),
  event: matrixRoomEventSchema,
  self: z.object({ userId: z.string().min(1).max(255) }),
  /** The room is a DM: listed in the bot's `m.direct` account data (or joined from an `is_direct` invite). */
  direct: z.boolean().default(false),
  /** A reaction's target event's sender, when the connector could learn it. */
  targetSender: z.string().max(255).optional(),
});
export type MatrixSocketPayload = z.infer<typeof matrixSocketPayloadSchema>;
