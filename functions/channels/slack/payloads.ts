import * as z from "zod";

/**
 * The shapes of what Slack POSTs to a Request URL (Events API JSON, slash-command forms,
 * interactivity `payload=` forms). Only the fields edgeclaw reads are declared; everything else is
 * kept (`loose`) and ignored. Field names are Slack's.
 */

export const slackFileSchema = z
  .object({
    id: z.string(),
    name: z.string().optional(),
    title: z.string().optional(),
    mimetype: z.string().optional(),
    size: z.number().int().nonnegative().optional(),
    url_private: z.string().optional(),
    url_private_download: z.string().optional(),
  })
  .loose();

/** `message` (all subtypes) and `app_mention` events. */
export const slackMessageEventSchema = z
  .object({
    type: z.enum(["message", "app_mention"]),
    subtype: z.string().optional(),
    channel: z.string().min(1),
    channel_type: z.string().optional(),
    user: z.string().optional(),
    bot_id: z.string().optional(),
    /** The app that posted it (bot messages); with `bot_profile.app_id`, how our own posts are recognised. */
    app_id: z.string().optional(),
    bot_profile: z
      .object({ id: z.string().optional(), app_id: z.string().optional() })
      .loose()
      .optional(),
    text: z.string().default(""),
    ts: z.string().min(1),
    thread_ts: z.string().optional(),
    parent_user_id: z.string().optional(),
    team: z.string().optional(),
    files: z.array(slackFileSchema).max(100).optional(),
    message: z
      .object({
        user: z.string().optional(),
        text: z.string().optional(),
        ts: z.string().optional(),
        thread_ts: z.string().optional(),
        bot_id: z.string().optional(),
        app_id: z.string().optional(),
      })
      .loose()
      .optional(),
    previous_message: z
      .object({
        user: z.string().optional(),
        text: z.string().optional(),
        ts: z.string().optional(),
        thread_ts: z.string().optional(),
      })
      .loose()
      .optional(),
    deleted_ts: z.string().optional(),
    user_profile: z
      .object({ display_name: z.string().optional(), real_name: z.string().optional() })
      .loose()
      .optional(),
  })
  .loose();
export type SlackMessageEvent = z.infer<typeof slackMessageEventSchema>;

export const slackReactionEventSchema = z
  .object({
    type: z.enum(["reaction_added", "reaction_removed"]),
    user: z.string(),
    reaction: z.string(),
    item_user: z.string().optional(),
    item: z
      .object({ type: z.string(), channel: z.string().optional(), ts: z.string().optional() })
      .loose(),
    event_ts: z.string().optional(),
  })
  .loose();
export type SlackReactionEvent = z.infer<typeof slackReactionEventSchema>;

/** Room events that become system events: membership, renames, pins. */
export const slackRoomEventSchema = z
  .object({
    type: z.enum([
      "member_joined_channel",
      "member_left_channel",
      "channel_rename",
      "pin_added",
      "pin_removed",
    ]),
    user: z.string().optional(),
    channel: z
      .union([z.string(), z.object({ id: z.string(), name: z.string().optional() }).loose()])
      .optional(),
    channel_id: z.string().optional(),
    event_ts: z.string().optional(),
  })
  .loose();
export type SlackRoomEvent = z.infer<typeof slackRoomEventSchema>;

/**
 * One installation of the app that can see the event. Slack truncates the list to one entry; for a
 * bot install its `user_id` is the bot user (`is_bot`), which is how the ack path learns who the bot
 * is without calling `auth.test`.
 */
export const slackAuthorizationSchema = z
  .object({
    enterprise_id: z.string().nullish(),
    team_id: z.string().nullish(),
    user_id: z.string().optional(),
    is_bot: z.boolean().optional(),
    is_enterprise_install: z.boolean().optional(),
  })
  .loose();

export const slackEventCallbackSchema = z
  .object({
    type: z.literal("event_callback"),
    team_id: z.string().min(1),
    api_app_id: z.string().optional(),
    enterprise_id: z.string().nullish(),
    authorizations: z.array(slackAuthorizationSchema).max(50).optional(),
    event_id: z.string().min(1),
    event_time: z.number().optional(),
    event: z.object({ type: z.string() }).loose(),
  })
  .loose();
export type SlackEventCallback = z.infer<typeof slackEventCallbackSchema>;

export const slackUrlVerificationSchema = z
  .object({ type: z.literal("url_verification"), challenge: z.string().min(1).max(512) })
  .loose();

export const slackAppRateLimitedSchema = z
  .object({
    type: z.literal("app_rate_limited"),
    team_id: z.string().optional(),
    minute_rate_limited: z.number().optional(),
  })
  .loose();

export const slackSlashCommandSchema = z.object({
  command: z.string().regex(/^\/\S+$/),
  text: z.string().default(""),
  team_id: z.string().min(1),
  channel_id: z.string().min(1),
  user_id: z.string().min(1),
  user_name: z.string().optional(),
  response_url: z.url(),
  trigger_id: z.string().min(1),
});
export type SlackSlashCommand = z.infer<typeof slackSlashCommandSchema>;

export const slackInteractionSchema = z
  .object({
    type: z.enum([
      "block_actions",
      "block_suggestion",
      "shortcut",
      "message_action",
      "view_submission",
      "view_closed",
      "interactive_message",
    ]),
    team: z.object({ id: z.string() }).loose().nullish(),
    user: z
      .object({
        id: z.string(),
        name: z.string().optional(),
        username: z.string().optional(),
        team_id: z.string().optional(),
      })
      .loose(),
    channel: z.object({ id: z.string(), name: z.string().optional() }).loose().nullish(),
    container: z
      .object({
        message_ts: z.string().optional(),
        thread_ts: z.string().optional(),
        channel_id: z.string().optional(),
      })
      .loose()
      .optional(),
    trigger_id: z.string().optional(),
    action_ts: z.string().optional(),
    callback_id: z.string().optional(),
    message: z
      .object({
        ts: z.string().optional(),
        text: z.string().optional(),
        thread_ts: z.string().optional(),
      })
      .loose()
      .optional(),
    actions: z
      .array(
        z
          .object({
            action_id: z.string().optional(),
            block_id: z.string().optional(),
            type: z.string().optional(),
            value: z.string().optional(),
            text: z.object({ text: z.string() }).loose().optional(),
            selected_option: z
              .object({
                value: z.string(),
                text: z.object({ text: z.string() }).loose().optional(),
              })
              .loose()
              .optional(),
          })
          .loose(),
      )
      .max(50)
      .optional(),
    view: z
      .object({
        id: z.string(),
        callback_id: z.string().optional(),
        state: z
          .object({ values: z.record(z.string(), z.record(z.string(), z.unknown())) })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type SlackInteraction = z.infer<typeof slackInteractionSchema>;
