import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          DATABASE_URL: inject("databaseUrl"),
          EDGECLAW_PG_WS_PROXY: inject("pgWsProxy"),
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
