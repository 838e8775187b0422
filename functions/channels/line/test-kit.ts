import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeLineApi } from "./simulate/line-api.ts";
import { TEST_LINE } from "./test-fixtures.ts";

/**
 * The workerd test suite's line (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.line` pointed at it (TEST_LINE in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeLineApi();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => lineTestChannel(values.url),
  bindings: (values) => ({
    FAKE_LINE_URL: values.url,
    // The default account reads these env fallbacks (no secret in its config block).
    LINE_CHANNEL_ACCESS_TOKEN: "line-token-default",
    LINE_CHANNEL_SECRET: TEST_LINE.channelSecret,
    TEST_LINE_BIZ_ACCESS_TOKEN: "line-token-biz",
    TEST_LINE_BIZ_CHANNEL_SECRET: TEST_LINE.bizChannelSecret,
  }),
};

function lineTestChannel(fakeLineUrl: string): Record<string, unknown> {
  return {
    apiBaseUrl: fakeLineUrl,
    dataApiBaseUrl: fakeLineUrl,
    accounts: {
      default: {},
      biz: {
        webhookPath: "/line/biz",
        channelAccessToken: { source: "env", id: "TEST_LINE_BIZ_ACCESS_TOKEN" },
        channelSecret: { source: "env", id: "TEST_LINE_BIZ_CHANNEL_SECRET" },
        dmPolicy: "open",
        allowFrom: ["*"],
        mediaMaxMb: 1,
        groups: {
          [TEST_LINE.groupOpen]: { requireMention: false },
          [TEST_LINE.groupGated]: {},
          [TEST_LINE.groupMembers]: { requireMention: false, allowFrom: [TEST_LINE.member] },
        },
      },
    },
  };
}
