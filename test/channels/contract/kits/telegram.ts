import {
  callbackUpdate,
  groupChat,
  messageUpdate,
  privateChat,
  TEST_TELEGRAM,
  uniqueUserId,
  visibleMessages,
} from "../../telegram/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";
import type { Conversation, Delivery, SystemEventKit } from "../system-kit.ts";

/** Telegram Bot API webhooks: a static X-Telegram-Bot-Api-Secret-Token, JSON updates. */

function update(body: unknown, secret: string = TEST_TELEGRAM.webhookSecret): WireRequest {
  return {
    path: "/telegram-webhook",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

let nextAllowed = 0;
/** The allowlisted users in turn, so the suite's DMs do not queue behind one another. */
function allowedUser(): string {
  const user = TEST_TELEGRAM.allowed[nextAllowed % TEST_TELEGRAM.allowed.length]!;
  nextAllowed += 1;
  return user;
}

function dmUpdate(user: string | number, text: string) {
  return messageUpdate({ from: { id: user }, chat: privateChat(user), text });
}

export const telegramKit: ChannelKit = {
  channel: "telegram",
  async dm(who, text) {
    const user = who === "allowed" ? allowedUser() : String(uniqueUserId());
    return {
      request: update(dmUpdate(user, text)),
      conversation: user,
      senderId: user,
      accountId: "default",
    };
  },
  async forged(text) {
    const body = dmUpdate(allowedUser(), text);
    return { request: update(body, "wrong-secret"), twin: update(body) };
  },
  async oversized(text, bytes) {
    const body = JSON.stringify(dmUpdate(allowedUser(), text));
    return { request: update(body + " ".repeat(bytes)), twin: update(body) };
  },
  exceptions: {
    stale: {
      reason:
        "Telegram signs nothing with a time: the webhook carries only the static secret token, so a replayed update is caught by its update_id (dedup), not by age",
    },
  },
  malformed: async () => update("{not json"),
  async replies(conversation) {
    return (await visibleMessages(conversation)).map((m) => m.text);
  },
};

// ---- System events (system-events.test.ts) ----

function telegramDelivery(body: unknown): Promise<Delivery> {
  return Promise.resolve({ via: "webhook", request: update(body) });
}

/** Where a Telegram update happens: the chat, and a forum topic. */
interface TelegramPlace {
  chat: ReturnType<typeof privateChat> | ReturnType<typeof groupChat>;
  topic?: number;
}

const topicFields = (place: TelegramPlace) =>
  place.topic === undefined ? {} : { message_thread_id: place.topic, is_topic_message: true };

function telegramConversation(
  name: string,
  place: (sender: string) => TelegramPlace,
  senders: { allowed?: string; refused?: string },
): Conversation {
  return {
    name,
    ...senders,
    message: (sender) => {
      const where = place(sender);
      return telegramDelivery(
        messageUpdate({
          from: { id: sender },
          chat: where.chat,
          text: "an ordinary message",
          ...(where.topic !== undefined ? { threadId: where.topic } : {}),
        }),
      );
    },
    events: {
      edited_message: (sender) => {
        const where = place(sender);
        return telegramDelivery(
          messageUpdate({
            kind: "edited_message",
            from: { id: sender },
            chat: where.chat,
            text: `edited ${uniqueUserId()}`,
            ...(where.topic !== undefined ? { threadId: where.topic } : {}),
          }),
        );
      },
      callback_query: (sender) => {
        const where = place(sender);
        const click = callbackUpdate({
          from: { id: sender },
          chat: where.chat,
          data: `choice-${uniqueUserId()}`,
        });
        Object.assign(click.callback_query.message, topicFields(where));
        return telegramDelivery(click);
      },
    },
  };
}

export const telegramSystemKit: SystemEventKit = {
  channel: "telegram",
  kinds: ["edited_message", "callback_query"],
  conversations: [
    telegramConversation(
      "a private chat (dmPolicy pairing)",
      (sender) => ({ chat: privateChat(sender) }),
      {
        allowed: TEST_TELEGRAM.owner,
        refused: String(uniqueUserId()),
      },
    ),
    // The suite's groups list no senders: anyone in a listed group speaks there.
    telegramConversation("a listed group", () => ({ chat: groupChat(TEST_TELEGRAM.openGroup) }), {
      allowed: String(uniqueUserId()),
    }),
    telegramConversation(
      "a topic of a listed forum",
      () => ({ chat: groupChat(TEST_TELEGRAM.forumGroup, true), topic: 7 }),
      { allowed: String(uniqueUserId()) },
    ),
    telegramConversation("an unlisted group", () => ({ chat: groupChat(-1009999000001) }), {
      refused: TEST_TELEGRAM.owner,
    }),
  ],
};
