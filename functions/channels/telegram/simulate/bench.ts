/**
 * Telegram figures through a local Worker (`npm run dev`: real workerd, Durable Objects, PGlite):
 *   GET  /health            the do-nothing baseline
 *   POST /telegram-webhook  updates with the secret token: verify → parse → route → SessionDO.accept
 *                           → 200, each from a group the config does not list, so access control
 *                           drops it after the durable accept and no agent run competes for the
 *                           2 cores: the ack path alone
 *   update → reply          one private message at a time, timed until the reply lands in the fake
 *                           Bot API, with the in-Worker demo model (EDGECLAW_FAKE_MODEL=1, no network)
 * The Bot API is functions/channels/telegram/simulate/telegram-api.ts on loopback. Bounded counts; nothing leaves the machine.
 *   npx tsx functions/channels/telegram/simulate/bench.ts [--requests 400 --concurrency 8 --replies 20]
 */
import { startFakeTelegramApi } from "./telegram-api.ts";
import { startDevInstance } from "../../../../scripts/bench/lib/dev-instance.ts";
import {
  benchArgs,
  healthBaseline,
  replyLands,
  warmUp,
} from "../../../../scripts/bench/lib/channel-bench.ts";
import { measure, printTable } from "../../../../scripts/bench/lib/measure.ts";

const { requests, concurrency, replies } = benchArgs();
const webhookSecret = "bench-telegram-secret-not-for-production";

const fakeTelegram = await startFakeTelegramApi();
const instance = await startDevInstance(
  {
    // One session per DM sender, so each measured update is its own conversation.
    session: { dmScope: "per-channel-peer" },
    channels: {
      telegram: {
        apiRoot: fakeTelegram.url,
        botToken: "6900000001:bench-token",
        webhookSecret,
        dmPolicy: "open",
        allowFrom: ["*"],
        streaming: { mode: "off" },
      },
    },
  },
  { EDGECLAW_FAKE_MODEL: "1" },
);

try {
  const base = Date.now() % 1_000_000;
  const update = (i: number, chat: { id: number; type: string }) =>
    JSON.stringify({
      update_id: base * 10_000 + i,
      message: {
        message_id: i + 1,
        date: Math.floor(Date.now() / 1000),
        from: { id: Math.abs(chat.id), is_bot: false, first_name: "Bench" },
        chat,
        text: `bench ${i}`,
      },
    });
  const post = async (body: string) => {
    const res = await fetch(`${instance.url}/telegram-webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-telegram-bot-api-secret-token": webhookSecret,
      },
      body,
    });
    await res.arrayBuffer();
    return res.status === 200 && res.headers.get("x-openclaw-delivery-accepted") === "durable";
  };

  await warmUp(instance.url, (i) =>
    post(update(1_000 + i, { id: -(base * 1000 + i), type: "supergroup" })),
  );

  const roundTrip = await measure(
    "update → reply in Telegram (demo model)",
    replies,
    1,
    async (i) => {
      const chatId = 500_000_000 + base * 100 + i;
      if (!(await post(update(2_000 + i, { id: chatId, type: "private" })))) return false;
      return replyLands(async () => {
        const messages = (await (
          await fetch(`${fakeTelegram.url}/_control/messages?chat_id=${chatId}`)
        ).json()) as unknown[];
        return messages.length > 0;
      });
    },
  );

  const baseline = await healthBaseline(instance.url, requests, concurrency);
  const accepted = await measure(
    "POST /telegram-webhook (update with secret, accept only)",
    requests,
    concurrency,
    (i) => post(update(10_000 + i, { id: -(base * 100_000 + i), type: "supergroup" })),
  );

  console.log(
    `\nedgeclaw Telegram benchmark — loopback, local workerd, concurrency ${concurrency} (round trips one at a time)\n`,
  );
  printTable([baseline, accepted, roundTrip], baseline);
} finally {
  await instance.stop();
  await fakeTelegram.stop();
}
