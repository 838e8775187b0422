import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
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
});
