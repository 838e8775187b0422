import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeFeishuApi } from "./simulate/feishu-api.ts";
import { TEST_FEISHU } from "./test-fixtures.ts";

/**
 * The workerd test suite's feishu (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.feishu` pointed at it (TEST_FEISHU in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeFeishuApi({
      apps: {
        [TEST_FEISHU.appId]: TEST_FEISHU.appSecret,
        [TEST_FEISHU.plainAppId]: TEST_FEISHU.plainAppSecret,
      },
    });
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => feishuTestChannel(values.url),
  bindings: (values) => ({
    FAKE_FEISHU_URL: values.url,
    // The default account reads these env fallbacks.
    FEISHU_APP_ID: TEST_FEISHU.appId,
    FEISHU_APP_SECRET: TEST_FEISHU.appSecret,
    FEISHU_ENCRYPT_KEY: TEST_FEISHU.encryptKey,
    FEISHU_VERIFICATION_TOKEN: TEST_FEISHU.verificationToken,
    FEISHU_BOT_OPEN_ID: TEST_FEISHU.botOpenId,
    TEST_FEISHU_PLAIN_APP_SECRET: TEST_FEISHU.plainAppSecret,
    TEST_FEISHU_PLAIN_VERIFICATION_TOKEN: TEST_FEISHU.plainVerificationToken,
  }),
};

function feishuTestChannel(fakeFeishuUrl: string): Record<string, unknown> {
  return {
    connectionMode: "webhook",
    apiBaseUrl: fakeFeishuUrl,
    accounts: {
      default: {},
      plain: {
        appId: TEST_FEISHU.plainAppId,
        appSecret: { source: "env", id: "TEST_FEISHU_PLAIN_APP_SECRET" },
        verificationToken: { source: "env", id: "TEST_FEISHU_PLAIN_VERIFICATION_TOKEN" },
        botOpenId: TEST_FEISHU.plainBotOpenId,
        webhookPath: "/feishu/plain",
        domain: "lark",
        dmPolicy: "open",
        allowFrom: ["*"],
        typingIndicator: false,
        groups: {
          [TEST_FEISHU.groupOpen]: { requireMention: false },
          [TEST_FEISHU.groupGated]: {},
          [TEST_FEISHU.groupMembers]: { requireMention: false, allowFrom: [TEST_FEISHU.member] },
        },
      },
      // Its own app for the stranger-gets-a-pairing-code test: the default account's pending
      // requests (three at most) fill up with the ingress tests' unknown senders.
      strangers: {
        appId: TEST_FEISHU.strangersAppId,
        appSecret: "test-feishu-strangers-secret",
        verificationToken: "test-feishu-strangers-token",
        botOpenId: TEST_FEISHU.plainBotOpenId,
        webhookPath: "/feishu/strangers",
      },
      ws: {
        connectionMode: "websocket",
        webhookPath: "/feishu/ws",
        appId: "cli_ws",
        appSecret: "ws-secret",
        verificationToken: "ws-token",
      },
    },
  };
}
