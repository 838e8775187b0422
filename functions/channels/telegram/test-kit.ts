import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeTelegramApi } from "./simulate/telegram-api.ts";
import { TEST_TELEGRAM } from "./test-fixtures.ts";

/**
 * The workerd test suite's telegram (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.telegram` pointed at it (TEST_TELEGRAM in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeTelegramApi();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => telegramTestChannel(values.url),
  bindings: (values) => ({
    FAKE_TELEGRAM_URL: values.url,
    TEST_TELEGRAM_BOT_TOKEN: TEST_TELEGRAM.botToken,
    TEST_TELEGRAM_WEBHOOK_SECRET: TEST_TELEGRAM.webhookSecret,
    TEST_TELEGRAM_PARTIAL_BOT_TOKEN: TEST_TELEGRAM.partialBotToken,
    TEST_TELEGRAM_PARTIAL_WEBHOOK_SECRET: TEST_TELEGRAM.partialWebhookSecret,
    TEST_TELEGRAM_POLL_BOT_TOKEN: "7000000003:test-poll-token",
    TEST_COMPANION_TGPOLL_SECRET: "test-companion-tgpoll-secret",
    TEST_COMPANION_TGALL_SECRET: "test-companion-tgall-secret",
  }),
  // test/workers/companion-api.test.ts: one key for the polling account only, one for every account.
  companionKeys: [
    {
      id: "tgpoll",
      secretEnv: "TEST_COMPANION_TGPOLL_SECRET",
      accounts: ["poll"],
      deployment: "tgpoll",
    },
    { id: "tgall", secretEnv: "TEST_COMPANION_TGALL_SECRET" },
  ],
};

function telegramTestChannel(fakeTelegramUrl: string): Record<string, unknown> {
  return {
    apiRoot: fakeTelegramUrl,
    botToken: { source: "env", id: "TEST_TELEGRAM_BOT_TOKEN" },
    webhookSecret: { source: "env", id: "TEST_TELEGRAM_WEBHOOK_SECRET" },
    botUsername: TEST_TELEGRAM.botUsername,
    allowFrom: [TEST_TELEGRAM.owner, ...TEST_TELEGRAM.allowed],
    groups: {
      // Topic 7 of the forum needs no mention; every other topic inherits the group's requireMention.
      [TEST_TELEGRAM.forumGroup]: {
        requireMention: true,
        topics: { "7": { requireMention: false } },
      },
      [TEST_TELEGRAM.openGroup]: { requireMention: false },
    },
    accounts: {
      default: {},
      // Long-polled by the companion (mode "polling"): no webhook path is served for it.
      poll: {
        mode: "polling",
        botToken: { source: "env", id: "TEST_TELEGRAM_POLL_BOT_TOKEN" },
        webhookPath: "/telegram-webhook/poll",
      },
      partial: {
        webhookPath: "/telegram-webhook/partial",
        botToken: { source: "env", id: "TEST_TELEGRAM_PARTIAL_BOT_TOKEN" },
        webhookSecret: { source: "env", id: "TEST_TELEGRAM_PARTIAL_WEBHOOK_SECRET" },
        streaming: { mode: "partial" },
      },
    },
  };
}
