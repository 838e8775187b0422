/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.slack`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.slack` pointed at the fake Slack Web API (functions/channels/slack/simulate/slack-api.ts). Two accounts: the
 * default one on /slack/events and "ops" on its own path with its own secrets
 * ("probe": own path and bot token, default signing secret; "plain": own path, the default account's
 * secrets, streaming off for the tests about that setting). Channel C0OPEN needs
 * no mention and threads every reply; C0MEMBERS needs no mention but admits only UMEMBER as a sender;
 * C0GATED (the "*" entry) requires a mention. DMs are open on the default account; "ops" pairs
 * unknown DM senders. Streaming is left at the default ("partial") as a user gets it.
 */
export const TEST_SLACK = {
  signingSecret: "test-slack-signing-secret",
  opsSigningSecret: "test-slack-ops-signing-secret",
  team: "TTEST",
  botUserId: "UBOTTEST",
  botId: "BBOTTEST",
  probeBotToken: "xoxb-test-probe-P7Q9",
  /** Account "nodm": the default account's secrets with DMs off (`dm.enabled: false`). */
  noDmPath: "/slack/nodm/events",
} as const;
