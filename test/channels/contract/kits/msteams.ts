import {
  activity,
  fakeTeams,
  messageTexts,
  teamsToken,
  TEST_MSTEAMS,
  uniqueId,
  type SignOptions,
} from "../../msteams/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/** Bot Framework messaging endpoint: a Bot Connector JWT whose serviceUrl claim matches the body's. */

async function bearer(body: unknown, sign: SignOptions = {}): Promise<WireRequest> {
  return {
    path: "/api/messages",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${await teamsToken(sign)}`,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

function dmActivity(sender: string, text: string) {
  const conversation = `a:${uniqueId("dm")}`;
  return { conversation, body: activity({ kind: "personal", conversation, sender, text }) };
}

export const msTeamsKit: ChannelKit = {
  channel: "msteams",
  async dm(who, text) {
    const sender = who === "allowed" ? TEST_MSTEAMS.owner : uniqueId("aad-stranger-");
    const { conversation, body } = dmActivity(sender, text);
    return { request: await bearer(body), conversation, senderId: sender, accountId: "default" };
  },
  async forged(text) {
    const { body } = dmActivity(TEST_MSTEAMS.owner, text);
    return { request: await bearer(body, { forged: true }), twin: await bearer(body) };
  },
  async stale(text) {
    const { body } = dmActivity(TEST_MSTEAMS.owner, text);
    return { request: await bearer(body, { expiresInSeconds: -3600 }), twin: await bearer(body) };
  },
  // JSON with the token's serviceUrl but no activity in it (not-JSON is 401: the serviceUrl the
  // token must match cannot be read).
  async oversized(text, bytes) {
    const raw = JSON.stringify(dmActivity(TEST_MSTEAMS.owner, text).body);
    return { request: await bearer(raw + " ".repeat(bytes)), twin: await bearer(raw) };
  },
  malformed: () => bearer({ type: "message", serviceUrl: fakeTeams() }),
  replies: messageTexts,
};

/** Where a Teams activity happens: the conversation as the Bot Framework names it. */
interface TeamsPlace {
  kind: "personal" | "groupChat" | "channel";
  conversation: string;
  channelData: Record<string, unknown>;
}

const tenant = { tenant: { id: TEST_MSTEAMS.tenantId } };

/** A 1:1 chat with `sender` (its own conversation id, stable per sender). */
const personal = (sender: string): TeamsPlace => ({
  kind: "personal",
  conversation: `a:dm-${sender}`,
  channelData: tenant,
});

/** A channel of TEST_MSTEAMS.team: the team in channelData on every activity, as Teams sends it. */
const teamChannel =
  (channelId: string) =>
  (_sender: string, threadRoot?: string): TeamsPlace => ({
    kind: "channel",
    conversation: threadRoot ? `${channelId};messageid=${threadRoot}` : channelId,
    channelData: { ...tenant, team: { id: TEST_MSTEAMS.team }, channel: { id: channelId } },
  });

async function teamsDelivery(path: string, body: unknown): Promise<Delivery> {
  const request = await bearer(body);
  return { via: "webhook", request: { ...request, path } };
}

/**
 * A conversation with an unmentioned message and every system-event kind Teams sends there
 * (parse.ts): reactions, edits, deletes, card clicks (invoke) and member changes. Events on a
 * channel message carry the thread root in the conversation id, as Teams sends them.
 */
function teamsConversation(
  name: string,
  path: string,
  place: (sender: string, threadRoot?: string) => TeamsPlace,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const at = (sender: string, fields: Record<string, unknown>, channelData = {}) => {
    const where = place(sender, uniqueId("1"));
    return teamsDelivery(
      path,
      activity({
        kind: where.kind,
        conversation: where.conversation,
        sender,
        extra: { ...fields, channelData: { ...where.channelData, ...channelData } },
      }),
    );
  };
  return {
    name,
    ...senders,
    message: (sender) => {
      const where = place(sender);
      return teamsDelivery(
        path,
        activity({
          kind: where.kind,
          conversation: where.conversation,
          sender,
          text: "an ordinary message",
          extra: { channelData: where.channelData },
        }),
      );
    },
    events: {
      messageReaction: (sender) =>
        at(sender, {
          type: "messageReaction",
          reactionsAdded: [{ type: "like" }],
          replyToId: uniqueId("1"),
        }),
      messageUpdate: (sender) =>
        at(
          sender,
          { type: "messageUpdate", text: `edited ${uniqueId("e")}` },
          { eventType: "editMessage" },
        ),
      messageDelete: (sender) =>
        at(sender, { type: "messageDelete" }, { eventType: "softDeleteMessage" }),
      invoke: (sender) =>
        at(sender, {
          type: "invoke",
          name: "adaptiveCard/action",
          value: { action: { type: "Action.Execute", verb: uniqueId("verb") } },
        }),
      conversationUpdate: (sender) =>
        at(
          sender,
          {
            type: "conversationUpdate",
            membersAdded: [{ id: `29:${uniqueId("new")}`, name: "Newcomer" }],
          },
          { eventType: "teamMemberAdded" },
        ),
    },
  };
}

const stranger = () => uniqueId("aad-stranger-");

export const msTeamsSystemKit: SystemEventKit = {
  channel: "msteams",
  kinds: ["messageReaction", "messageUpdate", "messageDelete", "invoke", "conversationUpdate"],
  conversations: [
    teamsConversation("a 1:1 chat (dmPolicy pairing)", "/api/messages", personal, {
      allowed: TEST_MSTEAMS.owner,
      refused: stranger(),
    }),
    teamsConversation(
      "a team channel that admits only the owner (groupPolicy open)",
      TEST_MSTEAMS.openPath,
      teamChannel(TEST_MSTEAMS.membersChannel),
      { allowed: TEST_MSTEAMS.owner, refused: stranger() },
    ),
    teamsConversation(
      "a listed channel of a listed team",
      "/api/messages",
      teamChannel(TEST_MSTEAMS.teamChannels.inherits),
      { allowed: stranger() },
    ),
    teamsConversation(
      "an unlisted channel of a listed team",
      "/api/messages",
      teamChannel(TEST_MSTEAMS.teamChannels.unlisted),
      { refused: TEST_MSTEAMS.owner },
    ),
    teamsConversation(
      "a listed group chat",
      "/api/messages",
      () => ({ kind: "groupChat", conversation: TEST_MSTEAMS.openChannel, channelData: tenant }),
      { allowed: stranger() },
    ),
  ],
};
