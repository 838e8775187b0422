import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { channelTestKits, testKitKey } from "./scripts/lib/channel-test-kits.ts";
import { buildTestConfig } from "./test/setup/test-config.ts";
import { buildBrowserWorker } from "./scripts/lib/browser-worker-build.ts";

// Each channel's test kit (functions/channels/<id>/test-kit.ts): the global setup starts its fake,
// and its block of the test config and its bindings point the test Worker at that fake.
const kits = await channelTestKits();
// The browser Worker (wrangler.browser.toml) as a deploy builds it: an auxiliary Worker of the pool,
// bound to the test Worker as BROWSER_WORKER; it drives Debian's Chromium through the loopback
// Browser Run stand-in that the global setup starts (scripts/lib/browser-run-standin.ts).
const browserWorker = await buildBrowserWorker(process.cwd());

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => {
      const channels = kits.map(({ channel, piece }) => {
        const values = inject(testKitKey(channel));
        return {
          channel,
          block: piece.config(values),
          companionKeys: piece.companionKeys,
          bindings: piece.bindings(values),
        };
      });
      // Its own variable: inside the array literal TypeScript would widen it with the other entries' keys.
      const browserWorkerOptions = {
        name: "edgeclaw-browser",
        modules: true,
        scriptPath: browserWorker.scriptPath,
        compatibilityDate: "2026-04-20",
        compatibilityFlags: ["nodejs_compat"],
        durableObjects: {
          BROWSER_SESSIONS: { className: "BrowserSessionDO", useSQLite: true },
        },
        bindings: {
          EDGECLAW_LOOPBACK_BROWSER_RUN: inject("browserRunUrl"),
        },
      };
      return {
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // env.AI: a loopback stand-in for the Workers AI binding (test/fakes/workers-ai-binding.js).
          serviceBindings: {
            AI: { name: "fake-workers-ai", entrypoint: "FakeWorkersAi" },
            BROWSER_WORKER: { name: "edgeclaw-browser", entrypoint: "BrowserService" },
          },
          // env.COMPANION_CONTAINER: a stand-in for the Containers runtime (test/fakes/container-runtime.js); the real class needs a container engine.
          durableObjects: {
            COMPANION_CONTAINER: {
              className: "FakeCompanionContainer",
              scriptName: "fake-container-runtime",
            },
          },
          workers: [
            browserWorkerOptions,
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
            EDGECLAW_CONFIG: JSON.stringify(
              buildTestConfig(
                {
                  model: inject("fakeModelUrl"),
                  web: inject("fakeWebUrl"),
                  doh: inject("fakeDohUrl"),
                  relay: inject("fakeRelayUrl"),
                  sandbox: inject("sandboxUrl"),
                },
                channels,
              ),
            ),
            FAKE_WEB_URL: inject("fakeWebUrl"),
            TEST_BROWSER_RUN_URL: inject("browserRunUrl"),
            FAKE_DOH_URL: inject("fakeDohUrl"),
            FAKE_RELAY_URL: inject("fakeRelayUrl"),
            TEST_RELAY_SECRET: "test-relay-secret",
            TEST_RELAY_TOKEN: "test-relay-token",
            TEST_METRICS_TOKEN: "test-metrics-token",
            TEST_SANDBOX_OUTBOUND_SECRET: "test-sandbox-outbound-secret",
            // env.SANDBOX is the real SandboxDO; with no container engine here its ctx.container is the
            // loopback stand-in (durable-objects/sandbox/loopback-container.ts → test/fakes/container-engine.ts).
            EDGECLAW_SANDBOX_CONTAINER: "1",
            EDGECLAW_LOOPBACK_CONTAINERS: inject("containerEngineUrl"),
            TEST_HOOKS_TOKEN: "test-hooks-token",
            ...Object.assign({}, ...channels.map((entry) => entry.bindings)),
          },
        },
      };
    }),
  ],
  test: {
    globalSetup: ["./test/setup/global.ts"],
    setupFiles: ["./test/setup/register-channels.ts", "./test/channels/pairing-cleanup.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    isolate: false,
  },
});
