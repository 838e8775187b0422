import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { callBotApi } from "../../functions/channels/telegram/client.ts";
import {
  telegramAccount,
  telegramChannelSchema,
} from "../../functions/channels/telegram/config.ts";
import { parseTelegramUpdate } from "../../functions/channels/telegram/parse.ts";
import { verifyTelegramSecret } from "../../functions/channels/telegram/verify.ts";
import { simulator as telegramSimulator } from "../../functions/channels/telegram/simulate/simulator.ts";

/** The Telegram simulator: what it sends passes the Worker's own check and parse; replies read back as shown. */
describe("telegram simulator", () => {
  it("points every account at the fake, generates the secrets it signs with, and keeps given ones", async () => {
    const fresh = telegramSimulator.prepare(
      { accounts: { biz: { webhookPath: "/tg/biz" } } },
      "http://127.0.0.1:9",
      {},
    );
    assert.equal(fresh.block.apiRoot, "http://127.0.0.1:9");
    assert.equal(
      (fresh.block.accounts as Record<string, { apiRoot: string }>).biz!.apiRoot,
      "http://127.0.0.1:9",
    );
    assert.match(fresh.env.TELEGRAM_BOT_TOKEN!, /^7100000001:sim[0-9a-f]{32}$/);
    assert.equal(fresh.env.TELEGRAM_WEBHOOK_SECRET, fresh.secrets.webhookSecret);
    const kept = telegramSimulator.prepare(
      { webhookSecret: { source: "env", id: "MY_SECRET" } },
      "http://127.0.0.1:9",
      { MY_SECRET: "given-secret", TELEGRAM_BOT_TOKEN: "1:x" },
    );
    assert.deepEqual(kept.env, {});
    assert.equal(kept.secrets.webhookSecret, "given-secret");
  });

  it("sends updates the Worker verifies and parses (DM, forum topic with a mention), and shows the fake's replies", async () => {
    const fake = await telegramSimulator.startFake();
    try {
      const prepared = telegramSimulator.prepare(undefined, fake.url, {});
      const account = telegramAccount(telegramChannelSchema.parse(prepared.block), "default");
      const target = {
        webhookUrl: "https://edgeclaw.local/telegram-webhook",
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      };

      const dm = await telegramSimulator.webhook({ text: "hello" }, target);
      assert.deepEqual(
        await verifyTelegramSecret(dm.headers, prepared.env.TELEGRAM_WEBHOOK_SECRET),
        { ok: true },
      );
      const parsedDm = parseTelegramUpdate(new Uint8Array(await dm.arrayBuffer()), {
        account,
        botId: "7100000001",
        receivedAt: 1,
      });
      assert.equal(parsedDm.kind, "envelopes");
      assert.equal(parsedDm.kind === "envelopes" && parsedDm.envelopes[0]!.chatType, "direct");

      const topic = await telegramSimulator.webhook(
        { group: "-1001234", thread: "3", text: "@edgeclaw_sim_bot status" },
        target,
      );
      const parsedTopic = parseTelegramUpdate(new Uint8Array(await topic.arrayBuffer()), {
        account,
        botId: "7100000001",
        receivedAt: 1,
      });
      assert.ok(parsedTopic.kind === "envelopes");
      assert.equal(parsedTopic.envelopes[0]!.threadId, "3");
      assert.equal(parsedTopic.envelopes[0]!.wasMentioned, true);

      const token = prepared.env.TELEGRAM_BOT_TOKEN!;
      await callBotApi(fake.url, token, "sendMessage", {
        chat_id: "-1001234",
        message_thread_id: 3,
        text: "<b>On it</b> &amp; done",
        parse_mode: "HTML",
      });
      await callBotApi(fake.url, token, "sendMessage", {
        chat_id: "-1001234",
        message_thread_id: 4,
        text: "elsewhere",
      });
      assert.deepEqual(
        await telegramSimulator.replies(fake.url, { group: "-1001234", thread: "3", text: "" }),
        ["[topic 3] On it & done"],
      );
    } finally {
      await fake.stop();
    }
  });
});
