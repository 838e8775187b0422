import {
  messageUpdate,
  privateChat,
  TEST_TELEGRAM,
  uniqueUserId,
  visibleMessages,
} from "../../telegram/helpers.ts";
import type { ChannelKit, WireRequest } from "../kit.ts";

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
