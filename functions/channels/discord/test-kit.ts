import type { ChannelTestKit } from "../../../scripts/lib/channel-test-kit.ts";
import { startFakeDiscordApi } from "./simulate/discord-api.ts";
import { TEST_DISCORD } from "./test-fixtures.ts";

/**
 * The workerd test suite's discord (scripts/lib/channel-test-kits.ts): the fake platform the global
 * setup starts, the test config's `channels.discord` pointed at it (TEST_DISCORD in test-fixtures.ts
 * says what each account is for), and the env bindings that block and the tests read.
 */
export const testKit: ChannelTestKit = {
  async start() {
    const fake = await startFakeDiscordApi();
    return { values: { url: fake.url }, stop: () => fake.stop() };
  },
  config: (values) => discordTestChannel(values.url),
  bindings: (values) => ({
    FAKE_DISCORD_URL: values.url,
    // The default account reads its token from this env fallback.
    DISCORD_BOT_TOKEN: TEST_DISCORD.botToken,
    TEST_DISCORD_PARTIAL_TOKEN: "MTEwMDAwMDAwMDAwMDAwMDAwMg.GfakeT.test-discord-partial-token",
  }),
  // The gateway connector signs with the test config's shared key k1.
  companionKeys: [{ id: "k1" }],
};

function discordTestChannel(fakeDiscordUrl: string): Record<string, unknown> {
  return {
    enabled: true,
    apiBaseUrl: `${fakeDiscordUrl}/api/v10`,
    applicationId: TEST_DISCORD.applicationId,
    publicKey: TEST_DISCORD.publicKey,
    // Discord's CDN, and the fake serving attachments (/attachments/…) on loopback.
    mediaAllowHosts: ["cdn.discordapp.com", "media.discordapp.net", fakeDiscordUrl],
    allowFrom: [TEST_DISCORD.owner, ...TEST_DISCORD.allowed],
    guilds: {
      [TEST_DISCORD.guild]: {
        requireMention: true,
        users: [TEST_DISCORD.owner, ...TEST_DISCORD.allowed],
        channels: {
          // Its tools.deny narrows runs there and in its threads (functions/agent/tools/conversation-policy.ts).
          [TEST_DISCORD.openChannel]: { requireMention: false, tools: { deny: ["write"] } },
          [TEST_DISCORD.gatedChannel]: {},
          [TEST_DISCORD.rolesChannel]: { requireMention: false, roles: [TEST_DISCORD.role] },
        },
      },
    },
    accounts: {
      default: {},
      // Its own bot, streaming the answer into an edited preview and quoting the first chunk.
      partial: {
        token: { source: "env", id: "TEST_DISCORD_PARTIAL_TOKEN" },
        streaming: { mode: "partial" },
        replyToMode: "first",
      },
    },
  };
}
