import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeHomeserver } from "./simulate/matrix-homeserver.ts";
import { TEST_MATRIX } from "./test-fixtures.ts";

/**
 * The workerd test suite's Matrix (scripts/lib/channel-test-kits.ts): the fake homeserver the
 * global setup starts, the test config's `channels.matrix` pointed at it (TEST_MATRIX in
 * test-fixtures.ts says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeHomeserver();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => {
    const team = {
      dm: { policy: "open", allowFrom: ["*"] },
      groups: {
        "*": { requireMention: true },
        [TEST_MATRIX.openRoom]: { requireMention: false },
        [TEST_MATRIX.membersRoom]: { requireMention: false, users: [TEST_MATRIX.member] },
      },
    };
    return {
      homeserver: values.url,
      accessToken: { source: "env", id: "TEST_MATRIX_ACCESS_TOKEN" },
      // The fake is on loopback, which the private-network guard refuses by default.
      network: { dangerouslyAllowPrivateNetwork: true },
      accounts: {
        default: {},
        team,
        threads: { ...team, threadReplies: "always", replyToMode: "first" },
      },
    };
  },
  bindings: (values) => ({
    FAKE_MATRIX_URL: values.url,
    TEST_MATRIX_ACCESS_TOKEN: TEST_MATRIX.accessToken,
    TEST_COMPANION_MATRIX_SECRET: "test-companion-matrix-secret",
  }),
  companionKeys: [{ id: "matrix", secretEnv: "TEST_COMPANION_MATRIX_SECRET" }],
};
