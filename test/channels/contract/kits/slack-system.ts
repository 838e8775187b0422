import { TEST_SLACK } from "../../../../functions/channels/slack/test-fixtures.ts";
import {
  APP_ID,
  BOT_USER,
  messageEvent,
  OPS_SIGNING_SECRET,
  SIGNING_SECRET,
  TEAM,
  uniqueId,
} from "../../slack/helpers.ts";
import type { Conversation, Delivery, SenderlessEvent, SystemEventKit } from "../system-kit.ts";
import { signed } from "./slack.ts";

/**
 * Slack for the system-event cross-check (system-events.test.ts): edits, deletes, reactions, pins,
 * membership, renames and every interactivity payload, signed like any Request URL body, in DMs of
 * three accounts (open, pairing, DMs off), a members-only channel and one of its threads, an open
 * channel, and a group DM (off by default).
 */

const TEST_SLACK_NODM_PATH = TEST_SLACK.noDmPath;

const slackTs = () =>
  `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;

/** One Slack account's Request URL, as the suite's config serves it. */
interface SlackAccountUrl {
  path: string;
  secret: string;
}
const DEFAULT_URL: SlackAccountUrl = { path: "/slack/events", secret: SIGNING_SECRET };
const OPS_URL: SlackAccountUrl = { path: "/slack/ops/events", secret: OPS_SIGNING_SECRET };
const NODM_URL: SlackAccountUrl = { path: TEST_SLACK_NODM_PATH, secret: SIGNING_SECRET };

async function slackDelivery(
  url: SlackAccountUrl,
  body: string,
  contentType = "application/json",
): Promise<Delivery> {
  const request = await signed(body, { path: url.path, secret: url.secret });
  return {
    via: "webhook",
    request: { ...request, headers: { ...request.headers, "content-type": contentType } },
  };
}

/** An Events API callback around `event`, with the bot install in `authorizations` as Slack sends it. */
function eventCallback(event: Record<string, unknown>): string {
  return JSON.stringify({
    token: "legacy-verification-token",
    team_id: TEAM,
    api_app_id: APP_ID,
    type: "event_callback",
    event_id: uniqueId("Ev"),
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      {
        enterprise_id: null,
        team_id: TEAM,
        user_id: BOT_USER,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    event,
  });
}

/** An interactivity request: `payload=<json>` as a form. */
function interaction(payload: Record<string, unknown>): string {
  return `payload=${encodeURIComponent(JSON.stringify({ team: { id: TEAM }, trigger_id: uniqueId("trig"), ...payload }))}`;
}

/** Where a Slack event happens: the channel id, its `channel_type` as messages carry it, and a thread. */
interface SlackPlace {
  channel: string;
  channelType: "im" | "mpim" | "channel";
  threadTs?: string;
}

const FORM = "application/x-www-form-urlencoded";

function slackEvents(url: SlackAccountUrl, place: (sender: string) => SlackPlace) {
  const callback = (event: Record<string, unknown>) => slackDelivery(url, eventCallback(event));
  const click = (payload: Record<string, unknown>) =>
    slackDelivery(url, interaction(payload), FORM);
  const thread = (where: SlackPlace) => (where.threadTs ? { thread_ts: where.threadTs } : {});
  return {
    message_changed: (sender: string) => {
      const where = place(sender);
      return callback({
        type: "message",
        subtype: "message_changed",
        channel: where.channel,
        channel_type: where.channelType,
        ts: slackTs(),
        message: { user: sender, text: `edited ${uniqueId("e")}`, ts: slackTs(), ...thread(where) },
        previous_message: { user: sender, text: "before", ...thread(where) },
      });
    },
    message_deleted: (sender: string) => {
      const where = place(sender);
      return callback({
        type: "message",
        subtype: "message_deleted",
        channel: where.channel,
        channel_type: where.channelType,
        ts: slackTs(),
        deleted_ts: slackTs(),
        previous_message: { user: sender, text: "gone", ts: slackTs(), ...thread(where) },
      });
    },
    reaction_added: (sender: string) =>
      callback({
        type: "reaction_added",
        user: sender,
        reaction: "thumbsup",
        item_user: BOT_USER,
        item: { type: "message", channel: place(sender).channel, ts: slackTs() },
        event_ts: slackTs(),
      }),
    reaction_removed: (sender: string) =>
      callback({
        type: "reaction_removed",
        user: sender,
        reaction: "eyes",
        item_user: BOT_USER,
        item: { type: "message", channel: place(sender).channel, ts: slackTs() },
        event_ts: slackTs(),
      }),
    pin_added: (sender: string) =>
      callback({
        type: "pin_added",
        user: sender,
        channel_id: place(sender).channel,
        item: { type: "message" },
        event_ts: slackTs(),
      }),
    pin_removed: (sender: string) =>
      callback({
        type: "pin_removed",
        user: sender,
        channel_id: place(sender).channel,
        item: { type: "message" },
        event_ts: slackTs(),
      }),
    member_joined_channel: (sender: string) =>
      callback({
        type: "member_joined_channel",
        user: sender,
        channel: place(sender).channel,
        channel_type: "C",
        team: TEAM,
        event_ts: slackTs(),
      }),
    member_left_channel: (sender: string) =>
      callback({
        type: "member_left_channel",
        user: sender,
        channel: place(sender).channel,
        channel_type: "C",
        team: TEAM,
        event_ts: slackTs(),
      }),
    block_actions: (sender: string) => {
      const where = place(sender);
      return click({
        type: "block_actions",
        user: { id: sender, name: "someone", team_id: TEAM },
        channel: { id: where.channel },
        container: {
          type: "message",
          message_ts: slackTs(),
          channel_id: where.channel,
          ...thread(where),
        },
        actions: [{ action_id: uniqueId("act"), type: "button", value: "yes" }],
      });
    },
    message_action: (sender: string) =>
      click({
        type: "message_action",
        callback_id: uniqueId("cb"),
        user: { id: sender, name: "someone", team_id: TEAM },
        channel: { id: place(sender).channel },
        message: { ts: slackTs(), text: "the message" },
      }),
    interactive_message: (sender: string) =>
      click({
        type: "interactive_message",
        callback_id: uniqueId("cb"),
        user: { id: sender, name: "someone" },
        channel: { id: place(sender).channel },
        action_ts: slackTs(),
        actions: [{ name: "answer", type: "button", value: uniqueId("v") }],
      }),
  };
}

/** Interactions Slack sends without a conversation (global shortcuts, modals): the acting user's DM. */
function slackViewEvents(url: SlackAccountUrl) {
  const click = (payload: Record<string, unknown>) =>
    slackDelivery(url, interaction(payload), FORM);
  return {
    shortcut: (sender: string) =>
      click({
        type: "shortcut",
        callback_id: uniqueId("cb"),
        user: { id: sender, name: "someone" },
      }),
    view_submission: (sender: string) =>
      click({
        type: "view_submission",
        user: { id: sender, name: "someone" },
        view: { id: uniqueId("V"), callback_id: uniqueId("cb"), state: { values: {} } },
      }),
    view_closed: (sender: string) =>
      click({
        type: "view_closed",
        user: { id: sender, name: "someone" },
        view: { id: uniqueId("V"), callback_id: uniqueId("cb") },
      }),
  };
}

function slackMessage(url: SlackAccountUrl, place: (sender: string) => SlackPlace) {
  return (sender: string) => {
    const where = place(sender);
    return slackDelivery(
      url,
      messageEvent({
        eventId: uniqueId("Ev"),
        channel: where.channel,
        channelType: where.channelType,
        user: sender,
        text: "an ordinary message",
        ts: slackTs(),
        ...(where.threadTs ? { threadTs: where.threadTs } : {}),
      }),
    );
  };
}

/** A DM with `sender` (its channel id stable per sender, `D…` as Slack's are). */
const dmWith = (sender: string): SlackPlace => ({ channel: `D${sender}`, channelType: "im" });

function slackDm(
  name: string,
  url: SlackAccountUrl,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const {
    member_joined_channel: _joined,
    member_left_channel: _left,
    ...inDm
  } = slackEvents(url, dmWith);
  return {
    name,
    ...senders,
    message: slackMessage(url, dmWith),
    events: { ...inDm, ...slackViewEvents(url) },
  };
}

function renameOf(url: SlackAccountUrl, channel: string): SenderlessEvent {
  return {
    sender: "slack",
    build: () =>
      slackDelivery(
        url,
        eventCallback({
          type: "channel_rename",
          channel: { id: channel, name: uniqueId("renamed-").toLowerCase(), created: 1 },
          event_ts: slackTs(),
        }),
      ),
  };
}

const THREAD_ROOT = slackTs();

export const slackSystemKit: SystemEventKit = {
  channel: "slack",
  kinds: [
    "message_changed",
    "message_deleted",
    "reaction_added",
    "reaction_removed",
    "pin_added",
    "pin_removed",
    "member_joined_channel",
    "member_left_channel",
    "channel_rename",
    "block_actions",
    "message_action",
    "interactive_message",
    "shortcut",
    "view_submission",
    "view_closed",
  ],
  conversations: [
    slackDm("a DM (dmPolicy open)", DEFAULT_URL, { allowed: uniqueId("U") }),
    slackDm("a DM of account ops (dmPolicy pairing)", OPS_URL, { refused: uniqueId("U") }),
    slackDm("a DM of an account with DMs off (dm.enabled false)", NODM_URL, {
      refused: uniqueId("U"),
    }),
    {
      name: "C0MEMBERS (only UMEMBER may speak)",
      allowed: "UMEMBER",
      refused: uniqueId("U"),
      message: slackMessage(DEFAULT_URL, () => ({ channel: "C0MEMBERS", channelType: "channel" })),
      events: {
        ...slackEvents(DEFAULT_URL, () => ({ channel: "C0MEMBERS", channelType: "channel" })),
        channel_rename: renameOf(DEFAULT_URL, "C0MEMBERS"),
      },
    },
    {
      name: "C0OPEN (anyone may speak)",
      message: slackMessage(DEFAULT_URL, () => ({ channel: "C0OPEN", channelType: "channel" })),
      events: { channel_rename: renameOf(DEFAULT_URL, "C0OPEN") },
    },
    {
      name: "a thread in C0MEMBERS",
      allowed: "UMEMBER",
      refused: uniqueId("U"),
      message: slackMessage(DEFAULT_URL, () => ({
        channel: "C0MEMBERS",
        channelType: "channel",
        threadTs: THREAD_ROOT,
      })),
      events: (() => {
        const all = slackEvents(DEFAULT_URL, () => ({
          channel: "C0MEMBERS",
          channelType: "channel",
          threadTs: THREAD_ROOT,
        }));
        return {
          message_changed: all.message_changed,
          message_deleted: all.message_deleted,
          block_actions: all.block_actions,
        };
      })(),
    },
    {
      name: "a group DM (dm.groupEnabled off, the default)",
      refused: uniqueId("U"),
      message: slackMessage(DEFAULT_URL, () => ({ channel: "G0GROUPDM", channelType: "mpim" })),
      events: (() => {
        const all = slackEvents(DEFAULT_URL, () => ({ channel: "G0GROUPDM", channelType: "mpim" }));
        return { message_changed: all.message_changed, message_deleted: all.message_deleted };
      })(),
      exceptions: Object.fromEntries(
        [
          "reaction_added",
          "reaction_removed",
          "pin_added",
          "pin_removed",
          "block_actions",
          "message_action",
          "interactive_message",
        ].map((kind) => [
          kind,
          "Slack sends no channel_type with it, and a G… id is a private channel as often as a group DM: it is judged as a channel of that id, while the group DM's messages are dropped by dm.groupEnabled",
        ]),
      ),
    },
  ],
};
