import type { ChannelTestKit, FakeValues } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeGoogleChatApi } from "./simulate/googlechat-api.ts";
import { TEST_GOOGLECHAT } from "./test-fixtures.ts";

/**
 * The workerd test suite's googlechat (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.googlechat` pointed at it (TEST_GOOGLECHAT in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeGoogleChatApi();
    return {
      values: { url: fake.url, serviceAccount: fake.serviceAccountJson },
      stop: () => fake.stop(),
    };
  },
  config: (values) => googleChatTestChannel(values.url),
  bindings: (values) => ({
    FAKE_GOOGLECHAT_URL: values.url,
    // The default account reads the service account key (the fake's) from this env fallback.
    GOOGLE_CHAT_SERVICE_ACCOUNT: serviceAccountOf(values),
  }),
};

function googleChatTestChannel(fakeUrl: string): Record<string, unknown> {
  const urls = {
    apiBaseUrl: `${fakeUrl}/`,
    tokenUrl: `${fakeUrl}/token`,
    oidcJwksUrl: `${fakeUrl}/oauth2/v3/certs`,
    chatJwksUrl: `${fakeUrl}/service_accounts/v1/metadata/jwk/chat@system.gserviceaccount.com`,
  };
  return {
    ...urls,
    audienceType: "app-url",
    audience: TEST_GOOGLECHAT.appUrlAudience,
    botUser: TEST_GOOGLECHAT.botUser,
    allowFrom: [TEST_GOOGLECHAT.owner],
    groups: { [TEST_GOOGLECHAT.openSpace]: { requireMention: true } },
    accounts: {
      default: {},
      project: {
        webhookPath: "/googlechat/project",
        audienceType: "project-number",
        audience: TEST_GOOGLECHAT.projectNumber,
        serviceAccount: { source: "env", id: "GOOGLE_CHAT_SERVICE_ACCOUNT" },
      },
    },
  };
}

function serviceAccountOf(values: FakeValues): string {
  const key = values.serviceAccount;
  if (!key) throw new Error("the fake Google Chat API handed no service account key");
  return key;
}
