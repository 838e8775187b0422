import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeMattermost } from "./simulate/mattermost-api.ts";
import { TEST_MATTERMOST } from "./test-fixtures.ts";

/**
 * The workerd test suite's mattermost (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.mattermost` pointed at it (TEST_MATTERMOST in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeMattermost();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => mattermostTestChannel(values.url),
  bindings: (values) => ({
    FAKE_MATTERMOST_URL: values.url,
    TEST_MATTERMOST_BOT_TOKEN: TEST_MATTERMOST.botToken,
    TEST_COMPANION_SOCKMM_SECRET: "test-companion-sockmm-secret",
  }),
  // test/channels/mattermost/: the WebSocket connector's key (shared with Slack's Socket Mode).
  companionKeys: [{ id: "sockmm", secretEnv: "TEST_COMPANION_SOCKMM_SECRET" }],
};

function mattermostTestChannel(fakeMattermostUrl: string): Record<string, unknown> {
  const allowAll = { dmPolicy: "open", allowFrom: ["*"], groupPolicy: "allowlist" };
  return {
    baseUrl: `${fakeMattermostUrl}/api/v4`,
    botToken: { source: "env", id: "TEST_MATTERMOST_BOT_TOKEN" },
    // The fake is on loopback, which the private-network guard refuses by default (test/channels/mattermost/private-network.test.ts).
    network: { dangerouslyAllowPrivateNetwork: true },
    accounts: {
      // Native slash commands (test/channels/mattermost/native-commands.test.ts): "cmds" (the defaults a user
      // gets, pairing its own so other files' strangers never share its pending-code limit) on the default
      // callback path, "team" and "prefix" on their own ("prefix" is never registered).
      default: {},
      cmds: { commands: { native: true } },
      team: {
        ...allowAll,
        commands: { native: true, callbackPath: TEST_MATTERMOST.teamCommandPath },
        // Button clicks (test/channels/mattermost/interactions.test.ts) from loopback and one documentation range.
        interactions: { allowedSourceIps: ["127.0.0.1", "::1", "198.51.100.0/24"] },
        groups: {
          "*": { requireMention: true },
          [TEST_MATTERMOST.openChannel]: { requireMention: false },
          [TEST_MATTERMOST.membersChannel]: {
            requireMention: false,
            users: [TEST_MATTERMOST.member],
          },
          [TEST_MATTERMOST.commandsChannel]: {
            requireMention: false,
            users: [TEST_MATTERMOST.member],
          },
        },
      },
      chatty: { ...allowAll, chatmode: "onmessage", groups: { "*": {} } },
      prefix: {
        ...allowAll,
        chatmode: "onchar",
        groups: { "*": {} },
        commands: { native: true, callbackPath: TEST_MATTERMOST.prefixCommandPath },
      },
      plain: { ...allowAll, streaming: { mode: "off" } },
    },
  };
}
