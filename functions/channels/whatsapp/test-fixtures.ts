/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids of the test
 * config's `channels.whatsapp` and of the linked device. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.whatsapp` as the kit writes it. The default account is what a user gets (dmPolicy
 * "pairing", every group eligible, group senders from `allowFrom`, which is empty: groups closed);
 * "team" has open DMs and every group open with a mention required, `quietGroup` without one;
 * "quote" is "team" with replyToMode "first" and read receipts off.
 */
export const TEST_WHATSAPP = {
  /** The linked device the connector reports (`self.id`). */
  self: { id: "15550001111:7@s.whatsapp.net", lid: "99887766554433@lid" },
  selfNumber: "+15550001111",
  quietGroup: "120363000000000001@g.us",
  /** The key the test config signs `/v1/outbound` with (test/setup/test-config.ts TEST_SANDBOX_KEY). */
  outboundKey: { id: "sbx", secret: "test-sandbox-outbound-secret" },
  companionKey: { id: "whatsapp", secret: "test-companion-whatsapp-secret" },
} as const;
