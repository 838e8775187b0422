/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.googlechat`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.googlechat` pointed at the fake Google (functions/channels/googlechat/simulate/googlechat-api.ts: key sets, token
 * exchange, Chat API). The default account has the defaults a user gets (pairing DMs, allowlisted
 * spaces with mentions required) with one known user and one open space; "project" verifies
 * project-number tokens on its own path.
 */
export const TEST_GOOGLECHAT = {
  appUrlAudience: "https://edgeclaw.test/googlechat",
  projectNumber: "123456789012",
  botUser: "users/app-bot",
  owner: "users/owner-1",
  openSpace: "spaces/GOPEN",
};
