import { TEST_WHATSAPP } from "../../../../functions/channels/whatsapp/test-fixtures.ts";
import {
  groupJid,
  messageId,
  messagePayload,
  person,
  SELF_JID,
  waMessage,
} from "../../whatsapp/helpers.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/**
 * WhatsApp for the system-event cross-check: Baileys events as the companion's connector forwards
 * them (signed with key "whatsapp"). Senders are E.164 numbers, as allowlists name them; their JID
 * is the number @s.whatsapp.net. Edits and deletes are `protocolMessage`s in `messages.upsert`;
 * a reaction is a `messages.reaction` entry on one of the bot's messages (key.fromMe). Account
 * "team" has open DMs and open groups; "default" pairs DMs and lets no group sender in.
 */

const jidOf = (phone: string) => `${phone.slice(1)}@s.whatsapp.net`;

function companion(accountId: string, payload: Record<string, unknown>, eventId: string): Delivery {
  return {
    via: "companion",
    key: TEST_WHATSAPP.companionKey,
    channel: "whatsapp",
    accountId,
    eventId,
    payload,
  };
}

function whatsappConversation(
  name: string,
  accountId: string,
  chat: () => string,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const keyOf = (sender: string, id: string) => {
    const remoteJid = chat();
    return {
      remoteJid,
      id,
      fromMe: false,
      ...(remoteJid.endsWith("@g.us") ? { participant: jidOf(sender) } : {}),
    };
  };
  const protocol = (sender: string, type: number, edited?: string) => {
    const key = keyOf(sender, messageId());
    const payload = {
      type: "message",
      self: SELF_JID,
      message: {
        key,
        messageTimestamp: Math.floor(Date.now() / 1000),
        message: {
          protocolMessage: {
            type,
            key: { ...keyOf(sender, messageId()) },
            ...(edited ? { editedMessage: { conversation: edited } } : {}),
          },
        },
      },
    };
    return companion(accountId, payload, `${key.remoteJid}:${key.id}`);
  };
  return {
    name,
    ...senders,
    message: async (sender) => {
      const message = waMessage({ chat: chat(), from: jidOf(sender), text: "an ordinary message" });
      if (!message.key.remoteJid.endsWith("@g.us")) message.key.remoteJid = chat();
      return companion(
        accountId,
        messagePayload(message),
        `${message.key.remoteJid}:${message.key.id}`,
      );
    },
    events: {
      edit: async (sender) => protocol(sender, 14, "edited"),
      delete: async (sender) => protocol(sender, 0),
      reaction: async (sender) => {
        const remoteJid = chat();
        const reactionKey = keyOf(sender, messageId());
        const payload = {
          type: "reaction",
          self: SELF_JID,
          key: { remoteJid, id: messageId(), fromMe: true },
          reaction: { key: reactionKey, text: "👍" },
        };
        return companion(accountId, payload, `${remoteJid}:${reactionKey.id}`);
      },
    },
  };
}

/** A DM's chat is the sender's own JID: each conversation asks for it by sender. */
function dmConversation(
  name: string,
  accountId: string,
  senders: { allowed?: string; refused?: string },
): Conversation {
  const sender = (senders.allowed ?? senders.refused)!;
  return whatsappConversation(name, accountId, () => jidOf(sender), senders);
}

const openGroup = groupJid();
const closedGroup = groupJid();

export const whatsappSystemKit: SystemEventKit = {
  channel: "whatsapp",
  kinds: ["edit", "delete", "reaction"],
  conversations: [
    dmConversation("a DM (team: dmPolicy open)", "team", { allowed: person().phone }),
    dmConversation("a DM (default: dmPolicy pairing)", "default", { refused: person().phone }),
    whatsappConversation("an open group (team)", "team", () => openGroup, {
      allowed: person().phone,
    }),
    whatsappConversation(
      "a group under the defaults (no group sender allowed)",
      "default",
      () => closedGroup,
      {
        refused: person().phone,
      },
    ),
  ],
};
