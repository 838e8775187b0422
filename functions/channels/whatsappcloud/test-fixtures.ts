/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.whatsappcloud`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.whatsappcloud` pointed at the fake Graph API (simulate/graph-api.ts):
 * - "default" is what a user gets: secrets and phone number ID from the env fallbacks
 *   (WHATSAPP_CLOUD_*), dmPolicy "pairing", groupPolicy "allowlist" with no group listed;
 * - "biz" (its own path, phoneNumberId BIZ_PHONE_NUMBER_ID, SecretRefs): open DMs, replyToMode "first",
 *   mediaMaxMb 1 and two listed groups — GROUP_OPEN (any sender, no mention needed) and
 *   GROUP_MEMBERS (only MEMBER may speak).
 */
export const TEST_WHATSAPP_CLOUD = {
  path: "/whatsappcloud/webhook",
  appSecret: "test-wa-default-app-secret",
  verifyToken: "test-wa-default-verify-token",
  phoneNumberId: "100000000000001",
  displayPhoneNumber: "15550000001",
  bizPath: "/whatsappcloud/biz",
  bizAppSecret: "test-wa-biz-app-secret",
  bizVerifyToken: "test-wa-biz-verify-token",
  bizPhoneNumberId: "100000000000002",
  bizDisplayPhoneNumber: "15550000002",
  wabaId: "200000000000001",
  groupOpen: "120363000000000001",
  groupMembers: "120363000000000002",
  member: "15557770001",
} as const;
