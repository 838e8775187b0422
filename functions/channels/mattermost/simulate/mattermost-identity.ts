/**
 * Who the fake Mattermost's bot token belongs to (GET /api/v4/users/me). A module of its own with no
 * node: imports, so the workerd test config can name the same bot without loading the fake server.
 */
export const FAKE_MATTERMOST_BOT = {
  id: "mmbot0000000000000000000000",
  username: "edgebot",
} as const;
