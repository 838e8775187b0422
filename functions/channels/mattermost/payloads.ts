import * as z from "zod";

/**
 * Mattermost's WebSocket events (api/v4/websocket), as the companion forwards them. Posts and
 * reactions arrive as JSON *strings* inside `data` (`data.post`, `data.reaction`); they are parsed
 * here, at the edge. Only the fields the Worker reads are listed; the rest passes (`loose`).
 */

export const mattermostPostSchema = z
  .object({
    id: z.string().min(1).max(64),
    create_at: z.number().int().nonnegative(),
    edit_at: z.number().int().nonnegative().optional(),
    delete_at: z.number().int().nonnegative().optional(),
    user_id: z.string().min(1).max(64),
    channel_id: z.string().min(1).max(64),
    root_id: z.string().max(64).optional(),
    message: z.string().max(200_000).default(""),
    /** "" for a user's post; system posts (joins, header changes, …) have a type. */
    type: z.string().default(""),
    props: z.record(z.string(), z.unknown()).nullish(),
    file_ids: z.array(z.string()).nullish(),
  })
  .loose();
export type MattermostPost = z.infer<typeof mattermostPostSchema>;

export const mattermostReactionSchema = z
  .object({
    user_id: z.string().min(1).max(64),
    post_id: z.string().min(1).max(64),
    emoji_name: z.string().min(1).max(64),
    create_at: z.number().int().nonnegative().default(0),
  })
  .loose();
export type MattermostReaction = z.infer<typeof mattermostReactionSchema>;

/** D = direct message, G = group message, O = public channel, P = private channel. */
export const mattermostChannelTypeSchema = z.enum(["D", "G", "O", "P"]);
export type MattermostChannelType = z.infer<typeof mattermostChannelTypeSchema>;

export const mattermostWsEventSchema = z
  .object({
    event: z.string().min(1),
    data: z.record(z.string(), z.unknown()).default({}),
    broadcast: z
      .object({
        channel_id: z.string().optional(),
        user_id: z.string().optional(),
        team_id: z.string().optional(),
      })
      .loose()
      .default({}),
    seq: z.number().int().optional(),
  })
  .loose();
export type MattermostWsEvent = z.infer<typeof mattermostWsEventSchema>;

/**
 * What the companion's Mattermost connector forwards: the WebSocket event unchanged, plus what the
 * connection knows and the event does not carry — who the bot is (`GET /users/me` at connect: its
 * own posts are never answered; `@username` is its mention) and, for events without
 * `data.channel_type` / `data.team_id` (edits, reactions), the channel's type and team as the
 * connector learnt them (from the channel's posts, else `GET /channels/{id}`).
 */
export const mattermostSocketPayloadSchema = z.object({
  event: mattermostWsEventSchema,
  self: z.object({ userId: z.string().min(1), username: z.string().min(1) }),
  channelType: mattermostChannelTypeSchema.optional(),
  teamId: z.string().max(64).optional(),
});
export type MattermostSocketPayload = z.infer<typeof mattermostSocketPayloadSchema>;

/** `data.post` / `data.reaction`: a JSON string holding the object. */
export function jsonStringField<T>(value: unknown, schema: z.ZodType<T>): T | undefined {
  if (typeof value !== "string") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const result = schema.safeParse(parsed);
  return result.success ? result.data : undefined;
}
