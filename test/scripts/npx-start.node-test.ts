import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectRoot, tempProject } from "./helpers.ts";

/**
 * `npx edgeclaw …` in a checkout right after `npm install` starts the CLI at once. npm's exec looks
 * at the project's own package.json first: had the root package a `bin` named edgeclaw, npm would
 * install the whole project into its npx cache on first use (minutes, with the lifecycle scripts run
 * again). The command comes from the `bin/` workspace instead, which `npm install` links into
 * node_modules/.bin, where npx finds it without installing anything.
 */
describe("npx edgeclaw in a checkout", () => {
  it("runs the CLI from node_modules/.bin without installing into npx's cache", () => {
    const root = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
      bin?: unknown;
      scripts: Record<string, string>;
    };
    assert.equal(
      root.bin,
      undefined,
      "the root package has no bin (npx would install the project)",
    );
    assert.equal(root.scripts.postinstall, undefined, "no install step reinstalls anything");
    const link = join(projectRoot, "node_modules", ".bin", "edgeclaw");
    assert.equal(realpathSync(link), join(projectRoot, "bin", "edgeclaw.mjs"));

    // A cache of its own: npx would put an install under <cache>/../_npx.
    const home = tempProject();
    const cache = join(home, "cache");
    const started = performance.now();
    const run = spawnSync("npm", ["exec", "--offline", "--", "edgeclaw", "--help"], {
      cwd: projectRoot,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: "false" },
    });
    const seconds = (performance.now() - started) / 1000;
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^usage: edgeclaw <command>/m);
    assert.equal(existsSync(join(home, "_npx")), false, "npx installed nothing into its cache");
    console.log(`npx edgeclaw --help: ${seconds.toFixed(1)} s`);
  });
});
