import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { buildTestConfig } from "./test/setup/test-config.ts";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          DATABASE_URL: inject("databaseUrl"),
          EDGECLAW_PG_WS_PROXY: inject("pgWsProxy"),
          EDGECLAW_COMPANION_INGRESS_SECRET: "test-companion-secret",
          EDGECLAW_CONFIG: JSON.stringify(buildTestConfig({ model: inject("fakeModelUrl"), web: inject("fakeWebUrl") })),
          FAKE_WEB_URL: inject("fakeWebUrl"),
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/setup/global.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
