import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { describe, it } from "node:test";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { writeEnvFile } from "../../scripts/lib/dev-vars.ts";
import { startLocalPostgres } from "../../scripts/lib/local-postgres.ts";
import { migrateDatabase, redactDatabaseUrl } from "../../scripts/lib/migrate-neon.ts";
import { describeDatabaseError } from "../../scripts/lib/database-error.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { requiredSecrets } from "../../functions/control/required-secrets.ts";
import { projectRoot, tempProject, tsxCli } from "./helpers.ts";

describe("deploy migrations over the Neon driver", () => {
  it("applies every migration to an empty database once, then nothing", async () => {
    const journal = JSON.parse(
      readFileSync(join(projectRoot, "migrations/meta/_journal.json"), "utf8"),
    ) as { entries: unknown[] };
    const pg = await startLocalPostgres({ migrate: false });
    try {
      const first = await migrateDatabase(pg.databaseUrl, { wsProxy: pg.wsProxy });
      assert.deepEqual(first, { before: 0, after: journal.entries.length });
      const tables = await pg.db.query<{ n: number }>(
        `select count(*)::int as n from information_schema.tables where table_name = 'sessions'`,
      );
      assert.equal(tables.rows[0]?.n, 1);
      const second = await migrateDatabase(pg.databaseUrl, { wsProxy: pg.wsProxy });
      assert.deepEqual(second, { before: journal.entries.length, after: journal.entries.length });
    } finally {
      await pg.stop();
    }
  });

  it("deploy --dry-run changes nothing in the database and says what a deploy would apply", async () => {
    const journal = JSON.parse(
      readFileSync(join(projectRoot, "migrations/meta/_journal.json"), "utf8"),
    ) as { entries: Array<{ tag: string }> };
    const pg = await startLocalPostgres({ migrate: false });
    try {
      // Asynchronous: this process serves the database the deploy script talks to.
      const child = spawn(
        process.execPath,
        [tsxCli, join(projectRoot, "scripts", "deploy.ts"), "--dry-run"],
        {
          cwd: projectRoot,
          env: {
            ...process.env,
            DATABASE_URL: pg.databaseUrl,
            EDGECLAW_PG_WS_PROXY: pg.wsProxy,
            EDGECLAW_CONFIG: "",
            WRANGLER_SEND_METRICS: "false",
          },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let output = "";
      child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      assert.match(
        output,
        new RegExp(
          `dry run: .* has 0 migrations; a deploy would apply ${journal.entries.map((e) => e.tag).join(", ")}`,
        ),
        output,
      );
      assert.doesNotMatch(output, /migrating /);
      const journalTable = await pg.db.query<{ present: boolean }>(
        `select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
      );
      assert.equal(journalTable.rows[0]?.present, false, "no migration ran");
      const tables = await pg.db.query<{ n: number }>(
        `select count(*)::int as n from information_schema.tables where table_name = 'sessions'`,
      );
      assert.equal(tables.rows[0]?.n, 0);
      assert.equal(code, 0, output);
    } finally {
      await pg.stop();
    }
  });

  it("a failed migration says why (DNS, refused connection), not only which SQL failed", async () => {
    const failure = async (url: string, wsProxy?: string) => {
      try {
        await migrateDatabase(url, { wsProxy });
      } catch (error) {
        return describeDatabaseError(error);
      }
      assert.fail("expected the migration to fail");
    };
    const dns = await failure("postgres://u:p@no-such-host.invalid/neondb");
    assert.match(dns, /^DNS: .*ENOTFOUND no-such-host\.invalid/);
    assert.match(dns, /\(while running: select /);
    const port = await freePort();
    assert.match(
      await failure(`postgres://u:p@127.0.0.1:${port}/neondb`, `127.0.0.1:${port}`),
      /^connection refused: .*ECONNREFUSED/,
    );
    // A server's refusal keeps its SQLSTATE on the error the driver raises.
    assert.match(
      describeDatabaseError(
        Object.assign(new Error('password authentication failed for user "u"'), { code: "28P01" }),
      ),
      /^authentication: /,
    );
  });

  it("never prints the database password", () => {
    assert.equal(
      redactDatabaseUrl("postgres://neondb_owner:s3cr3t@ep-x.neon.tech/neondb?sslmode=require"),
      "postgres://neondb_owner:***@ep-x.neon.tech/neondb",
    );
  });
});

describe("required secrets", () => {
  it("lists the database, the gateway token, the provider key in use and every SecretRef", () => {
    const raw = {
      agents: {
        defaults: {
          model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5.2"] },
        },
      },
      channels: {
        slack: {
          signingSecret: { source: "env", id: "SLACK_SIGNING_SECRET" },
          botToken: "${SLACK_BOT_TOKEN}",
        },
      },
    };
    const names = requiredSecrets(parseConfig(raw), raw).map((secret) => secret.name);
    assert.deepEqual(names, [
      "DATABASE_URL",
      "EDGECLAW_GATEWAY_TOKEN",
      "ANTHROPIC_API_KEY",
      "OPENAI_API_KEY",
      "SLACK_BOT_TOKEN",
      "SLACK_SIGNING_SECRET",
    ]);
  });

  it("asks for no gateway token when auth is off", () => {
    const raw = { gateway: { auth: { mode: "none" } } };
    assert.deepEqual(
      requiredSecrets(parseConfig(raw), raw).map((secret) => secret.name),
      ["DATABASE_URL"],
    );
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
