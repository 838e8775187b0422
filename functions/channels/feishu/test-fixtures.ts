/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.feishu`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.feishu` pointed at the fake Open Platform (functions/channels/feishu/simulate/feishu-api.ts). The default account
 * is what a user gets in webhook mode: only `connectionMode` and the base URL in config; app id,
 * secret, Encrypt Key, Verification Token and the bot's open_id from the FEISHU_* env fallbacks;
 * dmPolicy "pairing", groupPolicy "allowlist" with nothing allowed. "plain" is an app without an
 * Encrypt Key (token-only, on /feishu/plain) with open DMs and a group map — GROUP_OPEN needs no
 * mention, GROUP_GATED needs one, GROUP_MEMBERS admits only MEMBER. "ws" stays in websocket mode
 * (the companion's): the Worker must not serve its path.
 */
export const TEST_FEISHU = {
  appId: "cli_test_default",
  appSecret: "test-feishu-app-secret",
  encryptKey: "test-feishu-encrypt-key",
  verificationToken: "test-feishu-verification-token",
  botOpenId: "ou_bot0000000000000000000000000000",
  plainAppId: "cli_test_plain",
  plainAppSecret: "test-feishu-plain-secret",
  plainVerificationToken: "test-feishu-plain-token",
  plainBotOpenId: "ou_botplain00000000000000000000000",
  groupOpen: "oc_open000000000000000000000000000",
  groupGated: "oc_gated00000000000000000000000000",
  groupMembers: "oc_members000000000000000000000000",
  member: "ou_member0000000000000000000000000",
  strangersAppId: "cli_test_strangers",
} as const;
