import { interactionToken } from "../../../../functions/channels/mattermost/interactions.ts";
import { TEST_MATTERMOST } from "../../../../functions/channels/mattermost/test-fixtures.ts";
import { FAKE_MATTERMOST_BOT, mmId, postedEvent } from "../../mattermost/helpers.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/**
 * Mattermost for the system-event cross-check: WebSocket events as the companion's connector
 * forwards them (signed with key sockmm: the event, the bot's identity, and for edits and reactions
 * the channel's type and team as the connector learnt them) and button clicks on
 * /mattermost/interactions/<account> (from loopback, `_token` signed with the bot token). Account
 * "team" has open DMs and `membersChannel` admits only `member`; "default" pairs DMs and lists no
 * channel.
 */

const COMPANION_KEY = { id: "sockmm", secret: "test-companion-sockmm-secret" };
const TEAM = "team1";
const self = { userId: FAKE_MATTERMOST_BOT.id, username: FAKE_MATTERMOST_BOT.username };

type ChannelType = "D" | "G" | "O" | "P";

/** Where a Mattermost event happens: a channel, its type, and (for channels, not DMs) its team. */
interface MattermostPlace {
  channelId: string;
  type: ChannelType;
  /** A DM's name, `<user>__<user>`, which is how a click tells a DM from a channel. */
  channelName?: string;
  rootId?: string;
}

function socket(accountId: string, event: Record<string, unknown>, extra = {}): Delivery {
  return {
    via: "companion",
    key: COMPANION_KEY,
    channel: "mattermost",
    accountId,
    eventId: `e-${mmId("e")}`,
    payload: { event, self, ...extra },
  };
}

/** What the connector adds to an edit or a reaction (their events carry neither). */
function learnt(where: MattermostPlace) {
  return { channelType: where.type, ...(teamOf(where) ? { teamId: teamOf(where) } : {}) };
}

const teamOf = (where: MattermostPlace) =>
  where.type === "D" || where.type === "G" ? undefined : TEAM;

function post(where: MattermostPlace, sender: string, message: string) {
  return {
    id: mmId("p"),
    create_at: Date.now(),
    update_at: Date.now(),
    edit_at: Date.now(),
    delete_at: 0,
    user_id: sender,
    channel_id: where.channelId,
    root_id: where.rootId ?? "",
    message,
    type: "",
    props: {},
  };
}

function mattermostConversation(
  name: string,
  accountId: string,
  place: (sender: string) => MattermostPlace,
  senders: { allowed?: string; refused?: string },
  only?: readonly string[],
): Conversation {
  const edit = (event: "post_edited" | "post_deleted") => async (sender: string) => {
    const where = place(sender);
    return socket(
      accountId,
      {
        event,
        data: { post: JSON.stringify(post(where, sender, `edited ${mmId("t")}`)) },
        broadcast: { omit_users: null, user_id: "", channel_id: where.channelId, team_id: "" },
        seq: 9,
      },
      learnt(where),
    );
  };
  const reaction = (event: "reaction_added" | "reaction_removed") => async (sender: string) => {
    const where = place(sender);
    const reacted = {
      user_id: sender,
      post_id: mmId("p"),
      emoji_name: "thumbsup",
      create_at: Date.now(),
    };
    return socket(
      accountId,
      {
        event,
        data: { reaction: JSON.stringify(reacted) },
        broadcast: { omit_users: null, user_id: "", channel_id: where.channelId, team_id: "" },
        seq: 10,
      },
      learnt(where),
    );
  };
  const click = async (sender: string): Promise<Delivery> => {
    const where = place(sender);
    const context = { action_id: `approve${mmId("a").slice(0, 8)}`, choice: "yes" };
    const body = {
      user_id: sender,
      user_name: "someone",
      channel_id: where.channelId,
      channel_name: where.channelName ?? "town-square",
      team_id: TEAM,
      post_id: mmId("p"),
      trigger_id: mmId("t"),
      type: "",
      context: { ...context, _token: await interactionToken(context, TEST_MATTERMOST.botToken) },
    };
    return {
      via: "webhook",
      request: {
        path: `/mattermost/interactions/${accountId}`,
        headers: { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" },
        body: JSON.stringify(body),
      },
    };
  };
  const all = {
    post_edited: edit("post_edited"),
    post_deleted: edit("post_deleted"),
    reaction_added: reaction("reaction_added"),
    reaction_removed: reaction("reaction_removed"),
    button_click: click,
  };
  return {
    name,
    ...senders,
    message: async (sender) => {
      const where = place(sender);
      const { event } = postedEvent({
        channelId: where.channelId,
        channelType: where.type,
        userId: sender,
        message: "an ordinary message",
        ...(where.rootId ? { rootId: where.rootId } : {}),
      });
      // A DM or group message has no team (Mattermost sends team_id "" there).
      if (!teamOf(where)) event.data.team_id = "";
      return socket(accountId, event);
    },
    events: only
      ? Object.fromEntries(Object.entries(all).filter(([kind]) => only.includes(kind)))
      : all,
  };
}

/** The bot's side of a DM's name: a 26-character id as Mattermost's are (the fake's bot id is longer). */
const BOT_SIDE = mmId("bot");

const dm = (sender: string): MattermostPlace => {
  const other = BOT_SIDE;
  return {
    channelId: mmId("dm"),
    type: "D",
    channelName: [sender, other].sort().join("__"),
  };
};
const channel = (channelId: string) => (): MattermostPlace => ({ channelId, type: "O" });
const THREAD_ROOT = mmId("root");
const UNLISTED = mmId("c");

export const mattermostSystemKit: SystemEventKit = {
  channel: "mattermost",
  kinds: ["post_edited", "post_deleted", "reaction_added", "reaction_removed", "button_click"],
  conversations: [
    mattermostConversation("a DM (team: dmPolicy open)", "team", dm, { allowed: mmId("u") }),
    mattermostConversation("a DM (default: dmPolicy pairing)", "default", dm, {
      refused: mmId("u"),
    }),
    mattermostConversation(
      "a channel that admits only MEMBER (team)",
      "team",
      channel(TEST_MATTERMOST.membersChannel),
      { allowed: TEST_MATTERMOST.member, refused: mmId("u") },
    ),
    mattermostConversation(
      "a listed open channel (team)",
      "team",
      channel(TEST_MATTERMOST.openChannel),
      {
        allowed: mmId("u"),
      },
    ),
    mattermostConversation("an unlisted channel (default)", "default", channel(UNLISTED), {
      refused: mmId("u"),
    }),
    {
      ...mattermostConversation(
        "a thread in the members-only channel (team)",
        "team",
        () => ({ channelId: TEST_MATTERMOST.membersChannel, type: "O", rootId: THREAD_ROOT }),
        { allowed: TEST_MATTERMOST.member, refused: mmId("u") },
        ["post_edited", "post_deleted"],
      ),
      exceptions: {
        reaction_added:
          "Mattermost's reaction names the post, not the thread it is in: it is judged in the channel's session, while the thread's messages have their own",
        reaction_removed:
          "Mattermost's reaction names the post, not the thread it is in: it is judged in the channel's session, while the thread's messages have their own",
        button_click:
          "Mattermost's button callback names the post, not its thread: it is judged in the channel's session, while the thread's messages have their own",
      },
    },
  ],
};
