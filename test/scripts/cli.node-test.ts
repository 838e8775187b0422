import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import * as z from "zod";
import { describeIssues } from "../../functions/config/issue-text.ts";
import { databaseUrlProblem, neonWebSocketAddress } from "../../scripts/lib/neon-node.ts";
import { projectRoot, tempProject } from "./helpers.ts";

/** The operator CLI without a gateway: help, usage errors, offline config check, finding the stack. */
function edgeclaw(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [join(projectRoot, "bin", "edgeclaw.mjs"), ...args], {
    cwd: projectRoot,
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...process.env,
      EDGECLAW_URL: "",
      EDGECLAW_GATEWAY_TOKEN: "",
      OPENCLAW_GATEWAY_TOKEN: "",
      EDGECLAW_DATA_DIR: join(tempProject(), "data"),
      ...env,
    },
  });
}

describe("edgeclaw CLI", () => {
  it("gives every subcommand its own --help", () => {
    for (const [command, usage] of [
      [["sessions", "show"], /^usage: edgeclaw sessions show <key> \[--limit <n>\]/],
      [["pairing", "approve"], /^usage: edgeclaw pairing approve <channel> <code>/],
      [["config", "check"], /^usage: edgeclaw config check \[--file <edgeclaw\.json5>\]/],
    ] as const) {
      const run = edgeclaw([...command, "--help"]);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, usage);
    }
  });

  it("refuses bad arguments with exit 2 and that command's usage", () => {
    const cases: Array<[string[], RegExp]> = [
      [["agents", "list", "extra"], /unexpected argument "extra"/],
      [["agents", "list", "--account", "x"], /Unknown option '--account'/],
      [["sessions", "list", "--limit", "many"], /--limit must be a positive whole number/],
      [["sessions", "show"], /missing <key>/],
      [["pairing", "aprove", "slack", "X"], /unknown command "pairing aprove"/],
    ];
    for (const [args, reason] of cases) {
      const run = edgeclaw(args);
      assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, reason);
      assert.match(run.stderr, /usage: edgeclaw /);
    }
  });

  it("checks a config file offline, with the gateway's rules", () => {
    const dir = tempProject({
      "bad.json5": `{ sesion: {}, agents: { defaults: { userTimezone: "Nowhere/Land" } } }`,
      "good.json5": `{ session: { dmScope: "per-peer" } }`,
    });
    const bad = edgeclaw(["config", "check", "--file", join(dir, "bad.json5")]);
    assert.equal(bad.status, 1, bad.stderr);
    assert.match(bad.stdout, /^config INVALID/);
    assert.match(bad.stdout, /error: sesion: unknown key \(did you mean "session"\?\)/);
    assert.match(bad.stdout, /error: agents\.defaults\.userTimezone: expected an IANA time zone/);
    const good = edgeclaw(["config", "check", "--file", join(dir, "good.json5")]);
    assert.equal(good.status, 0, good.stderr);
    assert.match(good.stdout, /^config OK/);
  });

  it("says plainly when no gateway is given and no local dev stack runs", () => {
    const run = edgeclaw(["agents", "list"]);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /no running `npm run dev` found for .*data: start it, or pass --url/);
  });

  it("lists a group's commands for a bare group, and suggests the closest command", () => {
    const bare = edgeclaw(["sessions"]);
    assert.equal(bare.status, 2);
    assert.match(bare.stderr, /"sessions" needs a command/);
    for (const name of ["sessions list", "sessions show <key>", "sessions reset <key>"])
      assert.ok(bare.stderr.includes(`  ${name}`), bare.stderr);
    const help = edgeclaw(["channels", "telegram", "--help"]);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: edgeclaw channels telegram <command>/);
    assert.match(help.stdout, /channels telegram set-webhook/);
    for (const [typed, meant] of [
      [["sesions", "list"], "sessions list"],
      [["sessions", "lst"], "sessions list"],
      [["cron", "lst"], "cron list"],
    ] as const) {
      const run = edgeclaw([...typed]);
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, new RegExp(`did you mean "${meant}"\\?`));
    }
  });

  it("refuses negative numbers with a clear message and exit 2, and takes negative ids as values", () => {
    const cases: Array<[string[], RegExp]> = [
      [["sessions", "list", "--limit", "-5"], /--limit must be a positive whole number, got "-5"/],
      [["sessions", "show", "-5"], /"-5": a negative number is not a valid argument here/],
      [["simulate", "telegram", "--timeout", "-1", "hi"], /--timeout must be a positive number/],
      [["simulate", "carrier-pigeon", "hi"], /no simulator for "carrier-pigeon"/],
    ];
    for (const [args, reason] of cases) {
      const run = edgeclaw(args);
      assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.match(run.stderr, reason);
      assert.doesNotMatch(run.stderr, /ambiguous|Unknown option/);
    }
    // Telegram's group ids are negative: `--group -100…` is the id, not an option.
    const group = edgeclaw(["simulate", "telegram", "--group", "-1001234567890", "hi"]);
    assert.equal(group.status, 1, group.stderr);
    assert.match(group.stderr, /no simulated platforms running/);
  });

  it("has `deploy`, which is npm run deploy: it refuses a DATABASE_URL that is not Postgres", () => {
    const help = edgeclaw(["deploy", "--help"]);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: edgeclaw deploy \[--dry-run\] \[--skip-migrations\]/);
    const project = tempProject({ "edgeclaw.json5": "{}" });
    const run = edgeclaw(["deploy", "--dry-run"], {
      DATABASE_URL: "mysql://user:pw@db.example.com:3306/app",
      EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
    });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /^edgeclaw deploy: /m, "scripts/deploy.ts ran");
    assert.match(run.stderr, /DATABASE_URL must be a Postgres connection string .*not mysql:\/\//);
    assert.doesNotMatch(run.stderr, /pw/);
  });

  it("honours the database URL's port and names only Postgres URLs usable", () => {
    assert.equal(neonWebSocketAddress("ep-x.neon.tech", 5432), "ep-x.neon.tech/v2");
    assert.equal(neonWebSocketAddress("db.internal", 6543), "db.internal:6543/v2");
    assert.equal(databaseUrlProblem("postgresql://u:p@h:6543/db"), undefined);
    assert.match(databaseUrlProblem("https://h/db")!, /not https:\/\//);
    assert.match(databaseUrlProblem("not a url")!, /not a URL/);
  });

  it('says what a key expects once (no "expected expected")', () => {
    const schema = z.object({
      path: z.union([
        z.string().regex(/^\//, { message: "expected a path starting with /" }),
        z.string().regex(/^https:/, { message: "expected an https:// URL" }),
      ]),
    });
    const result = schema.safeParse({ path: "nope" });
    assert.ok(!result.success);
    const [line] = describeIssues(result.error.issues);
    assert.equal(line, "path: expected a path starting with / or an https:// URL");
    assert.doesNotMatch(line!, /expected expected/);
  });
});
