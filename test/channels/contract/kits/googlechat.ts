import {
  chatEvent,
  googleToken,
  TEST_GOOGLECHAT,
  uniqueId,
  visibleTexts,
  type SignOptions,
} from "../../googlechat/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/** Google Chat HTTP endpoints: a Google-signed bearer JWT whose audience is the app URL. */

async function bearer(body: unknown, sign: SignOptions = {}): Promise<WireRequest> {
  return {
    path: "/googlechat",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${await googleToken(sign)}`,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

function dmEvent(sender: string, text: string) {
  const space = `spaces/DM${uniqueId("c")}`;
  return { space, event: chatEvent({ space, dm: true, sender, text }) };
}

export const googleChatKit: ChannelKit = {
  channel: "googlechat",
  async dm(who, text) {
    const sender = who === "allowed" ? TEST_GOOGLECHAT.owner : `users/${uniqueId("stranger")}`;
    const { space, event } = dmEvent(sender, text);
    return {
      request: await bearer(event),
      conversation: space,
      senderId: sender,
      accountId: "default",
    };
  },
  async forged(text) {
    const { event } = dmEvent(TEST_GOOGLECHAT.owner, text);
    return { request: await bearer(event, { forged: true }), twin: await bearer(event) };
  },
  async stale(text) {
    const { event } = dmEvent(TEST_GOOGLECHAT.owner, text);
    return { request: await bearer(event, { expiresInSeconds: -3600 }), twin: await bearer(event) };
  },
  async oversized(text, bytes) {
    const { event } = dmEvent(TEST_GOOGLECHAT.owner, text);
    const body = JSON.stringify(event);
    return { request: await bearer(body + " ".repeat(bytes)), twin: await bearer(body) };
  },
  malformed: () => bearer({ type: "MESSAGE", space: { name: "nope" } }),
  replies: visibleTexts,
};

// ---- System events (system-events.test.ts) ----

function chatConversation(
  name: string,
  space: (sender: string) => { space: string; dm: boolean },
  senders: { allowed?: string; refused?: string },
): Conversation {
  const at = async (
    sender: string,
    type: string,
    extra: Record<string, unknown> = {},
  ): Promise<Delivery> => ({
    via: "webhook",
    request: await bearer(chatEvent({ ...space(sender), sender, type, extra })),
  });
  return {
    name,
    ...senders,
    message: (sender) => at(sender, "MESSAGE"),
    events: {
      ADDED_TO_SPACE: (sender) => at(sender, "ADDED_TO_SPACE"),
      REMOVED_FROM_SPACE: (sender) => at(sender, "REMOVED_FROM_SPACE"),
      CARD_CLICKED: (sender) =>
        at(sender, "CARD_CLICKED", {
          action: {
            actionMethodName: uniqueId("approve"),
            parameters: [{ key: "id", value: "7" }],
          },
        }),
    },
  };
}

/** A DM space of `sender` (stable per sender, as Google keeps one per user). */
const dmSpace = (sender: string) => ({ space: `spaces/DM${sender.replace(/\W/g, "")}`, dm: true });

export const googleChatSystemKit: SystemEventKit = {
  channel: "googlechat",
  kinds: ["ADDED_TO_SPACE", "REMOVED_FROM_SPACE", "CARD_CLICKED"],
  conversations: [
    chatConversation("a DM (dmPolicy pairing)", dmSpace, {
      allowed: TEST_GOOGLECHAT.owner,
      refused: `users/${uniqueId("stranger")}`,
    }),
    chatConversation("a listed space", () => ({ space: TEST_GOOGLECHAT.openSpace, dm: false }), {
      allowed: `users/${uniqueId("someone")}`,
    }),
    chatConversation("an unlisted space", () => ({ space: "spaces/GUNLISTED", dm: false }), {
      refused: TEST_GOOGLECHAT.owner,
    }),
  ],
};
