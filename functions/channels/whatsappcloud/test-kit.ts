import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeGraphApi } from "./simulate/graph-api.ts";
import { TEST_WHATSAPP_CLOUD } from "./test-fixtures.ts";

/**
 * The workerd test suite's WhatsApp Cloud API (scripts/lib/channel-test-kits.ts): the fake Graph
 * API the global setup starts, the test config's `channels.whatsappcloud` pointed at it
 * (TEST_WHATSAPP_CLOUD in test-fixtures.ts says what each account is for), and the env bindings
 * that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeGraphApi();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => ({
    graphApiBaseUrl: values.url,
    accounts: {
      default: {},
      biz: {
        webhookPath: TEST_WHATSAPP_CLOUD.bizPath,
        phoneNumberId: TEST_WHATSAPP_CLOUD.bizPhoneNumberId,
        appSecret: { source: "env", id: "TEST_WA_BIZ_APP_SECRET" },
        accessToken: { source: "env", id: "TEST_WA_BIZ_ACCESS_TOKEN" },
        verifyToken: { source: "env", id: "TEST_WA_BIZ_VERIFY_TOKEN" },
        dmPolicy: "open",
        allowFrom: ["*"],
        replyToMode: "first",
        mediaMaxMb: 1,
        groups: {
          [TEST_WHATSAPP_CLOUD.groupOpen]: { requireMention: false },
          [TEST_WHATSAPP_CLOUD.groupMembers]: {
            requireMention: false,
            allowFrom: [`+${TEST_WHATSAPP_CLOUD.member}`],
          },
        },
      },
    },
  }),
  bindings: (values) => ({
    FAKE_WHATSAPP_CLOUD_URL: values.url,
    // The default account reads these env fallbacks (nothing in its config block).
    WHATSAPP_CLOUD_APP_SECRET: TEST_WHATSAPP_CLOUD.appSecret,
    WHATSAPP_CLOUD_ACCESS_TOKEN: "wa-token-default",
    WHATSAPP_CLOUD_VERIFY_TOKEN: TEST_WHATSAPP_CLOUD.verifyToken,
    WHATSAPP_CLOUD_PHONE_NUMBER_ID: TEST_WHATSAPP_CLOUD.phoneNumberId,
    TEST_WA_BIZ_APP_SECRET: TEST_WHATSAPP_CLOUD.bizAppSecret,
    TEST_WA_BIZ_ACCESS_TOKEN: "wa-token-biz",
    TEST_WA_BIZ_VERIFY_TOKEN: TEST_WHATSAPP_CLOUD.bizVerifyToken,
  }),
};
