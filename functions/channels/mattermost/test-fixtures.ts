import { FAKE_MATTERMOST_BOT } from "./simulate/mattermost-identity.ts";

/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.mattermost`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.mattermost` pointed at the fake Mattermost (functions/channels/mattermost/simulate/mattermost-api.ts). The default
 * account is what a user gets (dmPolicy "pairing", groupPolicy "allowlist" with nothing allowed,
 * chatmode "oncall"); "team" is the convenience account: open DMs, every channel allowed with a
 * mention required, MMOPENCHANNEL0000000000000 without one, MMMEMBERSCHAN0000000000000 only for
 * MMMEMBER; "chatty" answers every channel message (chatmode onmessage), "prefix" `!`-prefixed ones;
 * "plain" is "team"'s DMs with streaming off.
 */
export const TEST_MATTERMOST = {
  botToken: "mm-test-token",
  /** Who the fake's token belongs to (GET /users/me). */
  bot: FAKE_MATTERMOST_BOT,
  openChannel: "mmopenchannel0000000000000",
  membersChannel: "mmmemberschan0000000000000",
  member: "mmmember000000000000000000",
  /** Like membersChannel, for the slash-command tests alone. */
  commandsChannel: "mmcommandschan00000000000",
  teamCommandPath: "/api/channels/mattermost/command/team",
  prefixCommandPath: "/api/channels/mattermost/command/prefix",
} as const;
