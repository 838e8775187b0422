import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/config/load.ts";
import { writeEnvFile } from "../../scripts/lib/dev-vars.ts";
import { startLocalPostgres } from "../../scripts/lib/local-postgres.ts";
import { migrateDatabase, redactDatabaseUrl } from "../../scripts/lib/migrate-neon.ts";
import { requiredSecrets } from "../../scripts/lib/required-secrets.ts";
import { projectRoot, tempProject } from "./helpers.ts";

describe("deploy migrations over the Neon driver", () => {
  it("applies every migration to an empty database once, then nothing", async () => {
    const journal = JSON.parse(readFileSync(join(projectRoot, "migrations/meta/_journal.json"), "utf8")) as { entries: unknown[] };
    const pg = await startLocalPostgres({ migrate: false });
    try {
      const first = await migrateDatabase(pg.databaseUrl, { wsProxy: pg.wsProxy });
      assert.deepEqual(first, { before: 0, after: journal.entries.length });
      const tables = await pg.db.query<{ n: number }>(`select count(*)::int as n from information_schema.tables where table_name = 'sessions'`);
      assert.equal(tables.rows[0]?.n, 1);
      const second = await migrateDatabase(pg.databaseUrl, { wsProxy: pg.wsProxy });
      assert.deepEqual(second, { before: journal.entries.length, after: journal.entries.length });
    } finally {
      await pg.stop();
    }
  });

  it("never prints the database password", () => {
    assert.equal(redactDatabaseUrl("postgres://neondb_owner:s3cr3t@ep-x.neon.tech/neondb?sslmode=require"), "postgres://neondb_owner:***@ep-x.neon.tech/neondb");
  });
});

describe("required secrets", () => {
  it("lists the database, the gateway token, the provider key in use and every SecretRef", () => {
    const raw = {
      agents: { defaults: { model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5.2"] } } },
      channels: { slack: { signingSecret: { source: "env", id: "SLACK_SIGNING_SECRET" }, botToken: "${SLACK_BOT_TOKEN}" } },
    };
    const names = requiredSecrets(parseConfig(raw), raw).map((secret) => secret.name);
    assert.deepEqual(names, ["DATABASE_URL", "EDGECLAW_GATEWAY_TOKEN", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]);
  });

  it("asks for no gateway token when auth is off", () => {
    const raw = { gateway: { auth: { mode: "none" } } };
    assert.deepEqual(requiredSecrets(parseConfig(raw), raw).map((secret) => secret.name), ["DATABASE_URL"]);
  });
});

describe("dev secrets file", () => {
  it("round-trips awkward values through dotenv syntax", () => {
    const values = {
      PLAIN: "sk-ant-123",
      SINGLE: "it's",
      BOTH: `it's "quoted"`,
      HASH: "a#b c",
      JSON: '{"a":1}',
      MULTI: "-----BEGIN KEY-----\nabc\n-----END KEY-----",
    };
    const file = join(tempProject(), "vars.env");
    writeEnvFile(file, values);
    assert.deepEqual(parseEnv(readFileSync(file, "utf8")), values);
  });
});
