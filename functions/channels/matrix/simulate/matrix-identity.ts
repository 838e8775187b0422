/**
 * Who the fake homeserver's access tokens belong to (GET /account/whoami). A module of its own with
 * no node: imports, so the workerd test config can name the same bot without loading the fake.
 */
export const FAKE_MATRIX_BOT = {
  userId: "@edgebot:fake.test",
  deviceId: "EDGECLAWDEV",
} as const;

/** The server name every id of the fake ends with. */
export const FAKE_MATRIX_SERVER = "fake.test";
