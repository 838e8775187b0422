import { TEST_SIGNAL } from "../../../../functions/channels/signal/test-fixtures.ts";
import {
  COMPANION_KEY,
  envelope,
  eventIdOf,
  number,
  payloadOf,
  timestamp,
} from "../../signal/helpers.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/**
 * Signal for the system-event cross-check: envelopes as the companion's connector forwards them
 * from signal-cli's receive (signed with key "signal": the envelope and the bot's identity).
 * Reactions name the bot's own message (reactionNotifications "own"); an edit is an
 * `editMessage`. Account "team" has open DMs and admits every sender in listed groups (its `*`
 * entry lists them all); "default" pairs DMs and lists no group.
 */

function companion(accountId: string, payload: ReturnType<typeof payloadOf>): Delivery {
  return {
    via: "companion",
    key: COMPANION_KEY,
    channel: "signal",
    accountId,
    eventId: eventIdOf(payload),
    payload,
  };
}

const botOf = (accountId: string) =>
  accountId === "team" ? TEST_SIGNAL.team : TEST_SIGNAL.bot.number;

function signalConversation(
  name: string,
  accountId: string,
  groupId: string | undefined,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const groupInfo = groupId ? { groupInfo: { groupId, type: "DELIVER" } } : {};
  return {
    name,
    ...senders,
    message: async (sender) =>
      companion(
        accountId,
        payloadOf(envelope(sender, { message: "an ordinary message", ...groupInfo }), accountId),
      ),
    events: {
      reaction: async (sender) =>
        companion(
          accountId,
          payloadOf(
            envelope(sender, {
              ...groupInfo,
              reaction: {
                emoji: "👍",
                targetAuthorNumber: botOf(accountId),
                targetAuthorUuid: null,
                targetSentTimestamp: 1_700_000_000_000,
                isRemove: false,
              },
            }),
            accountId,
          ),
        ),
      edit: async (sender) => {
        const ts = timestamp();
        const edited = envelope(sender, { message: "x" });
        const { dataMessage: _, ...rest } = edited;
        return companion(
          accountId,
          payloadOf(
            {
              ...rest,
              timestamp: ts,
              editMessage: {
                targetSentTimestamp: 1_700_000_000_001,
                dataMessage: { timestamp: ts, message: "edited", ...groupInfo },
              },
            } as unknown as ReturnType<typeof envelope>,
            accountId,
          ),
        );
      },
    },
  };
}

export const signalSystemKit: SystemEventKit = {
  channel: "signal",
  kinds: ["reaction", "edit"],
  conversations: [
    signalConversation("a DM (team: dmPolicy open)", "team", undefined, { allowed: number() }),
    signalConversation("a DM (default: dmPolicy pairing)", "default", undefined, {
      refused: number(),
    }),
    signalConversation("a listed group (team: groups *)", "team", TEST_SIGNAL.mentionGroup, {
      allowed: number(),
    }),
    signalConversation("an unlisted group (default)", "default", TEST_SIGNAL.openGroup, {
      refused: number(),
    }),
  ],
};
