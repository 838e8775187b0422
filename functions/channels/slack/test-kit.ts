import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeSlackApi } from "./simulate/slack-api.ts";
import { TEST_SLACK } from "./test-fixtures.ts";

/**
 * The workerd test suite's slack (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.slack` pointed at it (TEST_SLACK in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeSlackApi();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => slackTestChannel(values.url),
  bindings: (values) => ({
    FAKE_SLACK_URL: values.url,
    TEST_SLACK_BOT_TOKEN: "xoxb-test-default",
    TEST_SLACK_SIGNING_SECRET: TEST_SLACK.signingSecret,
    TEST_SLACK_OPS_BOT_TOKEN: "xoxb-test-ops",
    TEST_SLACK_OPS_SIGNING_SECRET: TEST_SLACK.opsSigningSecret,
    TEST_COMPANION_SOCKMM_SECRET: "test-companion-sockmm-secret",
  }),
  // test/channels/slack/socket.test.ts: the Socket Mode connector's key (shared with Mattermost's).
  companionKeys: [{ id: "sockmm", secretEnv: "TEST_COMPANION_SOCKMM_SECRET" }],
};

function slackTestChannel(fakeSlackUrl: string): Record<string, unknown> {
  return {
    mode: "http",
    apiBaseUrl: `${fakeSlackUrl}/api/`,
    botToken: { source: "env", id: "TEST_SLACK_BOT_TOKEN" },
    signingSecret: { source: "env", id: "TEST_SLACK_SIGNING_SECRET" },
    dmPolicy: "open",
    allowFrom: ["*"],
    groupPolicy: "allowlist",
    channels: {
      C0OPEN: { requireMention: false, replyToMode: "all" },
      C0THREADS: { requireMention: true, replyToMode: "all" },
      C0MEMBERS: { requireMention: false, users: ["UMEMBER"] },
      "*": { requireMention: true },
    },
    slashCommand: { enabled: true },
    accounts: {
      default: {},
      plain: { webhookPath: "/slack/plain/events", streaming: { mode: "off" } },
      // DMs turned off: a DM's edits, reactions and clicks are dropped like its messages
      // (test/channels/contract/system-events.test.ts).
      nodm: { webhookPath: TEST_SLACK.noDmPath, dm: { enabled: false } },
      ops: {
        webhookPath: "/slack/ops/events",
        dmPolicy: "pairing",
        allowFrom: [],
        streaming: { mode: "partial" },
        botToken: { source: "env", id: "TEST_SLACK_OPS_BOT_TOKEN" },
        signingSecret: { source: "env", id: "TEST_SLACK_OPS_SIGNING_SECRET" },
      },
      // Pairing like "ops", but used by one test file only: the 3-pending cap per account is shared
      // by every file that DMs "ops" as a stranger, so a test that must mint a code gets its own.
      pairing: {
        webhookPath: "/slack/pairing/events",
        dmPolicy: "pairing",
        allowFrom: [],
        botToken: { source: "env", id: "TEST_SLACK_OPS_BOT_TOKEN" },
        signingSecret: { source: "env", id: "TEST_SLACK_OPS_SIGNING_SECRET" },
      },
      // Its own token, so a test can make only this account's auth.test hang or fail.
      // A 1 MB mediaMaxMb, so file-size bounds are tested without moving 20 MB around.
      probe: {
        webhookPath: "/slack/probe/events",
        botToken: TEST_SLACK.probeBotToken,
        mediaMaxMb: 1,
      },
      // Socket Mode through the companion: no Request URL; the default account's bot token for replies.
      sock: { mode: "socket", appToken: { source: "env", id: "TEST_SLACK_APP_TOKEN" } },
      // A user who opened DMs (dmPolicy "open", allowFrom ["*"], as the Slack docs show) and listed no
      // channel: its own empty `channels` map keeps it out of the root's, so groups are at the default
      // (allowlist, nothing listed). test/channels/slack/group-defaults.test.ts.
      lockdown: {
        webhookPath: "/slack/lockdown/events",
        dmPolicy: "open",
        allowFrom: ["*"],
        channels: {},
        botToken: { source: "env", id: "TEST_SLACK_OPS_BOT_TOKEN" },
        signingSecret: { source: "env", id: "TEST_SLACK_OPS_SIGNING_SECRET" },
      },
    },
  };
}
