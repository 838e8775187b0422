import { env } from "cloudflare:test";
import type { Env } from "../../../workers/env.ts";
import { slackMessageKeys } from "../../../functions/channels/slack/parse.ts";
import { BOT_USER, TEAM, uniqueId } from "./helpers.ts";

/**
 * Slack request bodies for every kind of event Slack delivers to the Request URL, shaped as Slack
 * sends them (Events API callbacks with `authorizations`, interactivity and slash-command forms).
 * Each carries the dedup key the Worker derives from it, so a test can wait for its triage.
 */
export interface SlackDelivery {
  body: string;
  dedupKey: string;
  contentType: string;
}

export const slackTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;

export function eventCallback(event: Record<string, unknown>): SlackDelivery {
  const eventId = uniqueId("Ev");
  // Slack names the bot install in `authorizations` on every event.
  const authorizations = [
    {
      enterprise_id: null,
      team_id: TEAM,
      user_id: BOT_USER,
      is_bot: true,
      is_enterprise_install: false,
    },
  ];
  const body = JSON.stringify({
    token: "x",
    team_id: TEAM,
    api_app_id: "ATEST",
    type: "event_callback",
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations,
    event,
  });
  // A user's post is keyed by its channel and ts, every other event by its event id (slack/parse.ts).
  const post =
    event.type === "app_mention" ||
    (event.type === "message" &&
      event.subtype !== "message_changed" &&
      event.subtype !== "message_deleted");
  const dedupKey = post
    ? slackMessageKeys(TEAM, String(event.channel), String(event.ts), eventId).dedupKey
    : `slack:${TEAM}:${eventId}`;
  return { body, dedupKey, contentType: "application/json" };
}

export function plainMessage(
  channel: string,
  channelType: string,
  user: string,
  text: string,
  extra: Record<string, unknown> = {},
): SlackDelivery {
  return eventCallback({
    type: "message",
    channel,
    channel_type: channelType,
    user,
    text,
    ts: slackTs(),
    ...extra,
  });
}

/** The `app_mention` copy Slack sends beside the `message` copy of a post that mentions the bot. */
export function appMention(
  channel: string,
  user: string,
  text: string,
  ts = slackTs(),
): SlackDelivery {
  return eventCallback({
    type: "app_mention",
    channel,
    user,
    text: `<@${BOT_USER}> ${text}`,
    ts,
    event_ts: ts,
  });
}

export function messageEdit(
  channel: string,
  channelType: string,
  user: string,
  text: string,
): SlackDelivery {
  return eventCallback({
    type: "message",
    subtype: "message_changed",
    channel,
    channel_type: channelType,
    ts: slackTs(),
    message: { user, text, ts: slackTs() },
    previous_message: { user, text: "before" },
  });
}

export function messageDelete(channel: string, channelType: string, user: string): SlackDelivery {
  return eventCallback({
    type: "message",
    subtype: "message_deleted",
    channel,
    channel_type: channelType,
    ts: slackTs(),
    deleted_ts: slackTs(),
    previous_message: { user, text: "gone" },
  });
}

/** A reaction on one of the bot's own posts: it passes `reactionNotifications: "own"` (the default). */
export function reactionOnBotPost(channel: string, user: string): SlackDelivery {
  return eventCallback({
    type: "reaction_added",
    user,
    reaction: "thumbsup",
    item_user: BOT_USER,
    item: { type: "message", channel, ts: slackTs() },
    event_ts: slackTs(),
  });
}

export function memberJoined(channel: string, user: string): SlackDelivery {
  return eventCallback({ type: "member_joined_channel", user, channel, event_ts: slackTs() });
}

/** Slack names no user on a rename: the event is the channel's, not a sender's. */
export function channelRename(channel: string, name: string): SlackDelivery {
  return eventCallback({
    type: "channel_rename",
    channel: { id: channel, name, created: 1 },
    event_ts: slackTs(),
  });
}

export function pinAdded(channel: string, user: string): SlackDelivery {
  return eventCallback({
    type: "pin_added",
    user,
    channel_id: channel,
    item: { type: "message", channel, message: { ts: slackTs() } },
    event_ts: slackTs(),
  });
}

export function buttonClick(channel: string, user: string, value: string): SlackDelivery {
  const trigger = uniqueId("trig");
  const payload = JSON.stringify({
    type: "block_actions",
    team: { id: TEAM },
    user: { id: user, name: "mallory" },
    channel: { id: channel },
    trigger_id: trigger,
    response_url: "https://hooks.slack.com/actions/T/1/x",
    actions: [{ action_id: "approve", type: "button", value }],
  });
  return {
    body: `payload=${encodeURIComponent(payload)}`,
    dedupKey: `slack:${TEAM}:interaction:${trigger}`,
    contentType: "application/x-www-form-urlencoded",
  };
}

/** `/openclaw <text>`; its reply goes to the fake Slack's `responsePath`. */
export function slashCommand(
  channel: string,
  user: string,
  text: string,
  responsePath = `/response/${uniqueId("R")}`,
): SlackDelivery & { responsePath: string } {
  const trigger = uniqueId("T");
  const form = new URLSearchParams({
    token: "legacy",
    team_id: TEAM,
    channel_id: channel,
    channel_name: "somewhere",
    user_id: user,
    user_name: "mallory",
    command: "/openclaw",
    text,
    response_url: `${String((env as unknown as Env).FAKE_SLACK_URL)}${responsePath}`,
    trigger_id: trigger,
  });
  return {
    body: form.toString(),
    dedupKey: `slack:${TEAM}:slash:${trigger}`,
    contentType: "application/x-www-form-urlencoded",
    responsePath,
  };
}
