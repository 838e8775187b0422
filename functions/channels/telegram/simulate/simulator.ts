import { startFakeTelegramApi } from "./telegram-api.ts";
import { untilConnected } from "../../../../scripts/simulate/socket-wait.ts";
import type { WebhookSimulator, SimulatedMessage } from "../../../../scripts/simulate/simulator.ts";
import { simulatedSecret } from "../../../../scripts/simulate/secrets.ts";

/**
 * Telegram played by the fake Bot API (functions/channels/telegram/simulate/telegram-api.ts): updates POSTed with the
 * `X-Telegram-Bot-Api-Secret-Token` header, as Telegram sends them after `setWebhook`; replies read
 * back from the messages the fake stored, as the user sees them (HTML applied). `--group` is a chat
 * id (negative, e.g. -1001234567890), `--thread` a forum topic id (the group is then a forum).
 * In groups, mention the bot as @<botUsername> (default edgeclaw_sim_bot); `@name` words get
 * `mention` entities as Telegram's clients add them. A `mode: "polling"` account gets the same
 * Update from the fake's getUpdates, which the companion long-polls.
 */
const DEFAULT_SENDER = "424242";
const DEFAULT_USERNAME = "edgeclaw_sim_bot";
let lastUpdate = 0;

function chatOf(message: SimulatedMessage): string {
  return message.group ?? message.from ?? DEFAULT_SENDER;
}

export const simulator: WebhookSimulator = {
  id: "telegram",
  startFake: () => startFakeTelegramApi(),
  prepare(block, fakeUrl, env) {
    const own = block ?? {};
    const accounts = Object.fromEntries(
      Object.entries(
        (own.accounts as Record<string, Record<string, unknown>> | undefined) ?? {},
      ).map(([id, account]) => [id, { ...account, apiRoot: fakeUrl }]),
    );
    const secret = simulatedSecret(own.webhookSecret, "TELEGRAM_WEBHOOK_SECRET", env);
    // The fake takes tokens shaped like Telegram's: <bot id>:<secret>.
    const token = simulatedSecret(own.botToken, "TELEGRAM_BOT_TOKEN", env, "7100000001:sim");
    return {
      block: {
        ...own,
        apiRoot: fakeUrl,
        botUsername: own.botUsername ?? DEFAULT_USERNAME,
        ...(Object.keys(accounts).length ? { accounts } : {}),
      },
      env: { ...secret.add, ...token.add },
      // The bot id keys the fake's update queue (a token is <bot id>:<secret>).
      secrets: { webhookSecret: secret.value, botId: token.value.split(":")[0] ?? "" },
    };
  },
  async webhook(message, { webhookUrl, secrets }) {
    return new Request(webhookUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-telegram-bot-api-secret-token": secrets.webhookSecret!,
      },
      body: JSON.stringify(updateOf(message)),
    });
  },
  socket: {
    async deliver(message, { fakeUrl, secrets, deadline }) {
      const botId = secrets.botId ?? "";
      // Queued before the companion polls, an update would wait for it anyway; but one nobody polls
      // for would wait out --timeout, so first see that getUpdates is being called.
      await untilConnected(
        "Telegram",
        "the companion has not called getUpdates on the simulated Bot API",
        deadline,
        async () => {
          const res = await fetch(`${fakeUrl}/_control/calls?method=getUpdates`);
          return ((await res.json()) as unknown[]).length > 0;
        },
      );
      const update = updateOf(message);
      const res = await fetch(`${fakeUrl}/_control/updates`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ botId, updates: [update] }),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`the simulated Telegram answered ${res.status}`);
      // The companion's outbox key for an Update (functions/channels/telegram/companion/connector.ts).
      return { eventId: String(update.update_id) };
    },
  },
  async replies(fakeUrl, message) {
    const res = await fetch(
      `${fakeUrl}/_control/messages?chat_id=${encodeURIComponent(chatOf(message))}`,
    );
    const stored = (await res.json()) as Array<{
      text: string;
      message_thread_id?: number;
      deleted?: boolean;
    }>;
    const thread = message.thread && message.thread !== "1" ? Number(message.thread) : undefined;
    return stored
      .filter((m) => !m.deleted && (!message.group || m.message_thread_id === thread))
      .map((m) => `${m.message_thread_id ? `[topic ${m.message_thread_id}] ` : ""}${m.text}`);
  },
};

/** The Update Telegram sends for a message, to a webhook or from getUpdates. */
function updateOf(message: SimulatedMessage) {
  lastUpdate = Math.max(lastUpdate + 1, Math.floor(Date.now() / 10));
  const from = Number(message.from ?? DEFAULT_SENDER);
  const chat = message.group
    ? {
        id: Number(message.group),
        type: "supergroup",
        title: "Simulated group",
        ...(message.thread ? { is_forum: true } : {}),
      }
    : { id: from, type: "private", first_name: "Sim" };
  const entities = [...message.text.matchAll(/(^|[^\w@])(@[A-Za-z0-9_]{3,64})/g)].map((m) => ({
    type: "mention",
    offset: m.index! + m[1]!.length,
    length: m[2]!.length,
  }));
  return {
    update_id: lastUpdate,
    message: {
      message_id: lastUpdate % 1_000_000_000,
      from: { id: from, is_bot: false, first_name: "Sim", username: "sim_user" },
      chat,
      date: Math.floor(Date.now() / 1000),
      text: message.text,
      ...(entities.length ? { entities } : {}),
      ...(message.thread && message.thread !== "1"
        ? { message_thread_id: Number(message.thread), is_topic_message: true }
        : {}),
    },
  };
}
