import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { buildTestConfig } from "./test/setup/test-config.ts";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // env.AI: a loopback stand-in for the Workers AI binding (test/fakes/workers-ai-binding.js).
        serviceBindings: { AI: { name: "fake-workers-ai", entrypoint: "FakeWorkersAi" } },
        // env.COMPANION_CONTAINER: a stand-in for the Containers runtime (test/fakes/container-runtime.js); the real class needs a container engine.
        durableObjects: {
          COMPANION_CONTAINER: {
            className: "FakeCompanionContainer",
            scriptName: "fake-container-runtime",
          },
        },
        workers: [
          {
            name: "fake-workers-ai",
            modules: true,
            scriptPath: "./test/fakes/workers-ai-binding.js",
            compatibilityDate: "2026-04-20",
            bindings: { FAKE_MODEL_URL: inject("fakeModelUrl") },
          },
          {
            name: "fake-container-runtime",
            modules: true,
            scriptPath: "./test/fakes/container-runtime.js",
            compatibilityDate: "2026-04-20",
            // Miniflare 5 serves a Durable Object class only for a namespace its own Worker declares.
            durableObjects: { COMPANION_CONTAINER: "FakeCompanionContainer" },
          },
        ],
        bindings: {
          DATABASE_URL: inject("databaseUrl"),
          EDGECLAW_PG_WS_PROXY: inject("pgWsProxy"),
          EDGECLAW_COMPANION_INGRESS_SECRET: "test-companion-secret",
          TEST_COMPANION_TGPOLL_SECRET: "test-companion-tgpoll-secret",
          TEST_COMPANION_TGALL_SECRET: "test-companion-tgall-secret",
          TEST_TELEGRAM_POLL_BOT_TOKEN: "7000000003:test-poll-token",
          EDGECLAW_CONFIG: JSON.stringify(
            buildTestConfig({
              model: inject("fakeModelUrl"),
              web: inject("fakeWebUrl"),
              slack: inject("fakeSlackUrl"),
              doh: inject("fakeDohUrl"),
              line: inject("fakeLineUrl"),
              twilio: inject("fakeTwilioUrl"),
              telegram: inject("fakeTelegramUrl"),
              relay: inject("fakeRelayUrl"),
              googlechat: inject("fakeGoogleChatUrl"),
              feishu: inject("fakeFeishuUrl"),
              msteams: inject("fakeMsTeamsUrl"),
              discord: inject("fakeDiscordUrl"),
              mattermost: inject("fakeMattermostUrl"),
              sandbox: inject("sandboxUrl"),
            }),
          ),
          FAKE_WEB_URL: inject("fakeWebUrl"),
          FAKE_DOH_URL: inject("fakeDohUrl"),
          FAKE_SLACK_URL: inject("fakeSlackUrl"),
          FAKE_RELAY_URL: inject("fakeRelayUrl"),
          TEST_RELAY_SECRET: "test-relay-secret",
          TEST_RELAY_TOKEN: "test-relay-token",
          TEST_SLACK_BOT_TOKEN: "xoxb-test-default",
          TEST_SLACK_SIGNING_SECRET: "test-slack-signing-secret",
          TEST_SLACK_OPS_BOT_TOKEN: "xoxb-test-ops",
          TEST_SLACK_OPS_SIGNING_SECRET: "test-slack-ops-signing-secret",
          TEST_METRICS_TOKEN: "test-metrics-token",
          TEST_SANDBOX_OUTBOUND_SECRET: "test-sandbox-outbound-secret",
          // env.SANDBOX is the real SandboxDO; with no container engine here its ctx.container is the
          // loopback stand-in (durable-objects/sandbox/loopback-container.ts → test/fakes/container-engine.ts).
          EDGECLAW_SANDBOX_CONTAINER: "1",
          EDGECLAW_LOOPBACK_CONTAINERS: inject("containerEngineUrl"),
          TEST_HOOKS_TOKEN: "test-hooks-token",
          FAKE_LINE_URL: inject("fakeLineUrl"),
          // The default LINE account reads these env fallbacks (no secret in its config block).
          LINE_CHANNEL_ACCESS_TOKEN: "line-token-default",
          LINE_CHANNEL_SECRET: "test-line-channel-secret",
          TEST_LINE_BIZ_ACCESS_TOKEN: "line-token-biz",
          TEST_LINE_BIZ_CHANNEL_SECRET: "test-line-biz-channel-secret",
          FAKE_TWILIO_URL: inject("fakeTwilioUrl"),
          TEST_TWILIO_AUTH_TOKEN: "test-twilio-auth-token",
          FAKE_TELEGRAM_URL: inject("fakeTelegramUrl"),
          FAKE_GOOGLECHAT_URL: inject("fakeGoogleChatUrl"),
          // The default Google Chat account reads the service account key from this env fallback.
          GOOGLE_CHAT_SERVICE_ACCOUNT: inject("googleChatServiceAccount"),
          TEST_TELEGRAM_BOT_TOKEN: "7000000001:test-default-token",
          TEST_TELEGRAM_WEBHOOK_SECRET: "test-telegram-webhook-secret",
          TEST_TELEGRAM_PARTIAL_BOT_TOKEN: "7000000002:test-partial-token",
          TEST_TELEGRAM_PARTIAL_WEBHOOK_SECRET: "test-telegram-partial-secret",
          FAKE_FEISHU_URL: inject("fakeFeishuUrl"),
          // The default Feishu account reads these env fallbacks (test/setup/test-config.ts TEST_FEISHU).
          FEISHU_APP_ID: "cli_test_default",
          FAKE_MSTEAMS_URL: inject("fakeMsTeamsUrl"),
          FAKE_MATTERMOST_URL: inject("fakeMattermostUrl"),
          TEST_MATTERMOST_BOT_TOKEN: "mm-test-token",
          TEST_COMPANION_SOCKMM_SECRET: "test-companion-sockmm-secret",
          MSTEAMS_APP_PASSWORD: "test-teams-secret",
          FEISHU_APP_SECRET: "test-feishu-app-secret",
          FEISHU_ENCRYPT_KEY: "test-feishu-encrypt-key",
          FEISHU_VERIFICATION_TOKEN: "test-feishu-verification-token",
          FEISHU_BOT_OPEN_ID: "ou_bot0000000000000000000000000000",
          TEST_FEISHU_PLAIN_APP_SECRET: "test-feishu-plain-secret",
          TEST_FEISHU_PLAIN_VERIFICATION_TOKEN: "test-feishu-plain-token",
          FAKE_DISCORD_URL: inject("fakeDiscordUrl"),
          // The default Discord account reads its token from this env fallback (TEST_DISCORD.botToken).
          DISCORD_BOT_TOKEN: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfakeT.test-discord-default-token",
          TEST_DISCORD_PARTIAL_TOKEN:
            "MTEwMDAwMDAwMDAwMDAwMDAwMg.GfakeT.test-discord-partial-token",
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/setup/global.ts"],
    setupFiles: ["./test/setup/register-channels.ts", "./test/channels/pairing-cleanup.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    isolate: false,
  },
});
