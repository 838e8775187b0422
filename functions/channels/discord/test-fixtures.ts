/*
 * What the workerd tests share with this channel's test kit (test-kit.ts): the ids, secrets and
 * paths of the test config's `channels.discord`. Plain data, so tests inside workerd import it.
 */

/**
 * `channels.discord` on the fake REST API (functions/channels/discord/simulate/discord-api.ts), with the defaults a user gets:
 * pairing DMs, replyToMode off, streaming off, guild messages mention-gated. The default account has
 * no token in its block: it reads the DISCORD_BOT_TOKEN env fallback. Guild `guild` allowlists
 * `allowed` senders; its `open` channel needs no mention, `gated` does, any other channel is refused.
 * `publicKey` turns on the interactions endpoint (its private half signs test requests). Account
 * `partial` (its own bot) streams into an edited preview with replyToMode "first".
 */
export const TEST_DISCORD = {
  botId: "1100000000000000001",
  botToken: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfakeT.test-discord-default-token",
  applicationId: "1100000000000000001",
  publicKey: "8718cf825fa0caaa60dee9d6fb505928db7594000f5ed643110b9d42a2d39d12",
  privateKeyPkcs8:
    "302e020100300506032b65700422042096da67773508792d9e50c58a0114dc9944269791902e67ac3f3f327d8c99c9ec",
  owner: "1200000000000000001",
  /** Allowed senders (DMs and the guild), one per test that needs its own conversation. */
  allowed: Array.from({ length: 16 }, (_, i) => String(1200000000000000002n + BigInt(i))),
  guild: "1300000000000000001",
  openChannel: "1300000000000000011",
  gatedChannel: "1300000000000000012",
  otherChannel: "1300000000000000013",
  partialBotId: "1100000000000000002",
  /** A channel of the guild open to holders of `role` (beside the guild's users), no mention needed. */
  rolesChannel: "1300000000000000014",
  role: "1600000000000000001",
} as const;
