/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.telegram`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.telegram` pointed at the fake Bot API (functions/channels/telegram/simulate/telegram-api.ts), with the defaults a
 * user gets: pairing DMs (only the owner and `allowed` are let in), streaming "progress", replyToMode
 * off. Group forumGroup is a forum supergroup that requires a mention; openGroup an ordinary group
 * that does not. The "partial" account (its own bot, secret and path) streams the answer into an
 * edited preview, for the tests about that setting.
 */
export const TEST_TELEGRAM = {
  botToken: "7000000001:test-default-token",
  botId: "7000000001",
  webhookSecret: "test-telegram-webhook-secret",
  botUsername: "edgeclaw_test_bot",
  owner: "70001",
  /** Allowed DM senders, one per test that needs its own chat. */
  allowed: Array.from({ length: 12 }, (_, i) => String(70002 + i)),
  forumGroup: "-1001000000001",
  openGroup: "-1001000000002",
  partialBotToken: "7000000002:test-partial-token",
  partialWebhookSecret: "test-telegram-partial-secret",
} as const;
