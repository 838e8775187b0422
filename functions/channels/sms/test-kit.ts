import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeTwilioApi } from "./simulate/twilio-api.ts";
import { TEST_TWILIO } from "./test-fixtures.ts";

/**
 * The workerd test suite's sms (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.sms` pointed at it (TEST_TWILIO in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeTwilioApi({
      accounts: { [TEST_TWILIO.accountSid]: TEST_TWILIO.authToken },
    });
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => smsTestChannel(values.url),
  bindings: (values) => ({
    FAKE_TWILIO_URL: values.url,
    TEST_TWILIO_AUTH_TOKEN: TEST_TWILIO.authToken,
  }),
};

function smsTestChannel(fakeTwilioUrl: string): Record<string, unknown> {
  return {
    accountSid: TEST_TWILIO.accountSid,
    authToken: { source: "env", id: "TEST_TWILIO_AUTH_TOKEN" },
    apiBaseUrl: fakeTwilioUrl,
    // One written with the prefix and punctuation OpenClaw accepts; it is normalised to the E.164 form.
    allowFrom: [
      ...TEST_TWILIO.allowed.slice(0, -1),
      `twilio-sms:${TEST_TWILIO.allowed.at(-1)!.replace(/^\+1(\d{3})(\d{3})(\d{4})$/, "+1 ($1) $2-$3")}`,
    ],
    accounts: {
      default: { fromNumber: TEST_TWILIO.fromNumber },
      proxied: {
        webhookPath: "/webhooks/sms/proxied",
        fromNumber: TEST_TWILIO.proxiedFromNumber,
        publicWebhookUrl: TEST_TWILIO.proxiedPublicUrl,
      },
      service: {
        webhookPath: "/webhooks/sms/service",
        messagingServiceSid: TEST_TWILIO.messagingServiceSid,
      },
    },
  };
}
