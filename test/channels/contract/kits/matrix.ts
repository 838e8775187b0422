import { TEST_MATRIX } from "../../../../functions/channels/matrix/test-fixtures.ts";
import { BOT, COMPANION_KEY, mxId, payloadOf, roomEvent } from "../../matrix/helpers.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/**
 * Matrix for the system-event cross-check: room events as the companion's /sync connector forwards
 * them (signed with key "matrix": the event, its room, the bot, whether the room is a DM, and for a
 * reaction the sender of the event it annotates — the bot, since reactionNotifications "own" keeps
 * only those). Account "team" has open DMs and `membersRoom` admits only `member`; "default" pairs
 * DMs and lists no room.
 */

function companion(accountId: string, payload: ReturnType<typeof payloadOf>): Delivery {
  return {
    via: "companion",
    key: COMPANION_KEY,
    channel: "matrix",
    accountId,
    eventId: payload.event.event_id,
    payload,
  };
}

function matrixConversation(
  name: string,
  accountId: string,
  room: () => { roomId: string; direct: boolean },
  senders: { allowed?: string; refused?: string },
): Conversation {
  return {
    name,
    ...senders,
    message: async (sender) => {
      const { roomId, direct } = room();
      return companion(
        accountId,
        payloadOf(roomId, roomEvent({ sender, body: "an ordinary message" }), { direct }),
      );
    },
    events: {
      edit: async (sender) => {
        const { roomId, direct } = room();
        const event = roomEvent({
          sender,
          content: {
            msgtype: "m.text",
            body: "* edited",
            "m.new_content": { msgtype: "m.text", body: "edited" },
            "m.relates_to": { rel_type: "m.replace", event_id: mxId("$", "orig") },
          },
        });
        return companion(accountId, payloadOf(roomId, event, { direct }));
      },
      reaction: async (sender) => {
        const { roomId, direct } = room();
        const event = roomEvent({
          sender,
          type: "m.reaction",
          content: {
            "m.relates_to": { rel_type: "m.annotation", event_id: mxId("$", "t"), key: "👍" },
          },
        });
        return companion(accountId, payloadOf(roomId, event, { direct, targetSender: BOT }));
      },
    },
  };
}

const dmRoom = mxId("!", "dm");
const dm = () => ({ roomId: dmRoom, direct: true });
const listed = (roomId: string) => () => ({ roomId, direct: false });

export const matrixSystemKit: SystemEventKit = {
  channel: "matrix",
  kinds: ["edit", "reaction"],
  conversations: [
    matrixConversation("a DM (team: dm.policy open)", "team", dm, { allowed: mxId("@", "u") }),
    matrixConversation("a DM (default: dm.policy pairing)", "default", dm, {
      refused: mxId("@", "u"),
    }),
    matrixConversation(
      "a room that admits only MEMBER (team)",
      "team",
      listed(TEST_MATRIX.membersRoom),
      {
        allowed: TEST_MATRIX.member,
        refused: mxId("@", "u"),
      },
    ),
    matrixConversation("a listed open room (team)", "team", listed(TEST_MATRIX.openRoom), {
      allowed: mxId("@", "u"),
    }),
    matrixConversation("an unlisted room (default)", "default", listed(mxId("!", "unlisted")), {
      refused: mxId("@", "u"),
    }),
  ],
};
