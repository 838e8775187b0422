import { FAKE_MATRIX_BOT } from "./simulate/matrix-identity.ts";

/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids and secrets of
 * the test config's `channels.matrix`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.matrix` pointed at the fake homeserver (functions/channels/matrix/simulate/matrix-homeserver.ts).
 * The default account is what a user gets (dm.policy "pairing", groupPolicy "allowlist" with no
 * room listed); "team" has open DMs, `openRoom` without a mention, `membersRoom` only for
 * `member`, every other room with a mention required; "threads" is "team" with threadReplies "always"
 * and replyToMode "first".
 */
export const TEST_MATRIX = {
  accessToken: "mx-test-token",
  bot: FAKE_MATRIX_BOT,
  openRoom: "!open:fake.test",
  membersRoom: "!members:fake.test",
  member: "@member:fake.test",
} as const;
