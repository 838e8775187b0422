import { FAKE_SIGNAL_BOT } from "./simulate/signal-world.ts";

/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the numbers and keys
 * of the test config's `channels.signal`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.signal` pointed at the fake signal-cli daemon, whose replies go through a companion
 * stand-in (the kit starts the companion's real `/v1/outbound` surface with the Signal sender).
 * The default account is what a user gets (dmPolicy "pairing", groupPolicy "allowlist" with no
 * group listed); "team" has open DMs with read receipts, `openGroup` without a mention, every
 * other group with a mention required.
 */
export const TEST_SIGNAL = {
  bot: FAKE_SIGNAL_BOT,
  team: "+15550000002",
  openGroup: "b3Blbi1ncm91cC1pZA==",
  mentionGroup: "bWVudGlvbi1ncm91cA==",
  /** The suite's companion outbound key (test/setup/test-config.ts TEST_SANDBOX_KEY): the Worker signs with it. */
  outboundKey: { id: "sbx", secret: "test-sandbox-outbound-secret" },
} as const;
