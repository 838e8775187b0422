/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.line`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.line` pointed at the fake LINE API (functions/channels/line/simulate/line-api.ts, API and content host in
 * one). The default account is what a user gets: no keys but the base URLs, secrets from the env
 * fallbacks LINE_CHANNEL_ACCESS_TOKEN / LINE_CHANNEL_SECRET, dmPolicy "pairing", groupPolicy
 * "allowlist" with nothing allowed. "biz" is the convenience account (own path and secrets): open
 * DMs and an allowlisted group map — GROUP_OPEN needs no mention, GROUP_GATED needs one,
 * GROUP_MEMBERS admits only MEMBER as a sender.
 */
export const TEST_LINE = {
  channelSecret: "test-line-channel-secret",
  bizChannelSecret: "test-line-biz-channel-secret",
  botUserId: `U${"b0".repeat(16)}`,
  groupOpen: `C${"0a".repeat(16)}`,
  groupGated: `C${"0b".repeat(16)}`,
  groupMembers: `C${"0c".repeat(16)}`,
  member: `U${"0d".repeat(16)}`,
} as const;
