import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeMsTeamsApi } from "./simulate/msteams-api.ts";
import { TEST_MSTEAMS } from "./test-fixtures.ts";

/**
 * The workerd test suite's msteams (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.msteams` pointed at it (TEST_MSTEAMS in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeMsTeamsApi();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => msTeamsTestChannel(values.url),
  bindings: (values) => ({
    FAKE_MSTEAMS_URL: values.url,
    MSTEAMS_APP_PASSWORD: "test-teams-secret",
  }),
};

function msTeamsTestChannel(fakeUrl: string): Record<string, unknown> {
  return {
    enabled: true,
    appId: TEST_MSTEAMS.appId,
    tenantId: TEST_MSTEAMS.tenantId,
    openIdMetadataUrl: `${fakeUrl}/botframework/v1/.well-known/openidconfiguration`,
    loginBaseUrl: `${fakeUrl}/login`,
    serviceUrlAllowlist: ["smba.trafficmanager.net", "*.botframework.com", fakeUrl],
    // Downloads: the fake under both names; the bot's token only ever to 127.0.0.1 (attachment tests).
    mediaAllowHosts: ["*.sharepoint.com", fakeUrl, fakeUrl.replace("127.0.0.1", "localhost")],
    mediaAuthAllowHosts: ["smba.trafficmanager.net", fakeUrl],
    allowFrom: [TEST_MSTEAMS.owner],
    groups: { [TEST_MSTEAMS.openChannel]: { requireMention: true } },
    // One listed team (teams-config.test.ts): per-team and per-channel requireMention / replyStyle.
    teams: {
      [TEST_MSTEAMS.team]: {
        requireMention: false,
        channels: {
          [TEST_MSTEAMS.teamChannels.inherits]: {},
          [TEST_MSTEAMS.teamChannels.gated]: { requireMention: true, replyStyle: "top-level" },
          [TEST_MSTEAMS.teamChannels.threaded]: {
            replyStyle: "thread",
            tools: { deny: ["write"] },
          },
        },
      },
    },
    accounts: {
      default: {},
      // Every group open (groupPolicy "open") but one team channel narrowed to the owner: what a
      // sender refused there must stay refused in every kind of event (test/channels/contract/system-events.test.ts).
      open: {
        webhook: { path: TEST_MSTEAMS.openPath },
        appPassword: { source: "env", id: "MSTEAMS_APP_PASSWORD" },
        groupPolicy: "open",
        teams: {
          [TEST_MSTEAMS.team]: {
            requireMention: false,
            channels: {
              [TEST_MSTEAMS.membersChannel]: { users: [TEST_MSTEAMS.owner] },
              "*": {},
            },
          },
        },
      },
    },
  };
}
