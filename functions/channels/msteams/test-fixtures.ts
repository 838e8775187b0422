/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.msteams`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.msteams` pointed at the fake Microsoft (functions/channels/msteams/simulate/msteams-api.ts: OpenID metadata and
 * keys, client-credentials tokens, Bot Connector). The defaults a user gets (pairing DMs,
 * allowlisted groups with mentions required, replies in channel threads) with one known user and
 * one open channel; the fake's own origin is added to the serviceUrl allowlist. The app password
 * comes from the MSTEAMS_APP_PASSWORD env fallback.
 */
export const TEST_MSTEAMS = {
  appId: "00000000-aaaa-4bbb-8ccc-000000000001",
  tenantId: "11111111-2222-4333-8444-555555555555",
  owner: "aad-owner-1",
  openChannel: "19:open-channel@thread.tacv2",
  team: "19:team-eng@thread.tacv2",
  teamChannels: {
    inherits: "19:eng-general@thread.tacv2",
    gated: "19:eng-gated@thread.tacv2",
    threaded: "19:eng-threads@thread.tacv2",
    unlisted: "19:eng-secret@thread.tacv2",
  },
  /** Account "open" (groupPolicy open): in `team`, `membersChannel` admits only the owner as a sender. */
  openPath: "/api/messages/open",
  membersChannel: "19:eng-members@thread.tacv2",
};
