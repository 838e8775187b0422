import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { TEST_WHATSAPP } from "./test-fixtures.ts";

/**
 * The workerd test suite's WhatsApp (scripts/lib/channel-test-kits.ts): events arrive as the
 * companion's connector posts them (signed /internal/companion/events, the tests do that), and
 * replies leave through the fake companion this kit starts (`companionOutboundUrl`: the real
 * /v1/outbound surface with a recording sender; the global setup routes the test config's
 * `companion.url` to it for channel "whatsapp").
 */
export const testKit: ChannelTestKit = {
  async start() {
    // Imported here, not at the top: vitest.config.ts loads this file with Node's type stripping,
    // and the companion's HTTP surface uses TypeScript it cannot strip (the global setup can).
    const { startFakeCompanionOutbound } = await import("./simulate/fake-companion-outbound.ts");
    const fake = await startFakeCompanionOutbound([TEST_WHATSAPP.outboundKey]);
    return {
      values: { url: fake.controlUrl, companionOutboundUrl: fake.outboundUrl },
      stop: () => fake.stop(),
    };
  },
  config: () => {
    const team = {
      dmPolicy: "open",
      allowFrom: ["*"],
      groupPolicy: "open",
      groups: {
        "*": { requireMention: true },
        [TEST_WHATSAPP.quietGroup]: { requireMention: false },
      },
    };
    return {
      accounts: {
        default: {},
        team,
        quote: { ...team, replyToMode: "first", sendReadReceipts: false },
      },
    };
  },
  bindings: (values) => ({
    FAKE_WHATSAPP_URL: values.url,
    TEST_COMPANION_WHATSAPP_SECRET: TEST_WHATSAPP.companionKey.secret,
  }),
  companionKeys: [{ id: "whatsapp", secretEnv: "TEST_COMPANION_WHATSAPP_SECRET" }],
};
