import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";
import { DEFAULT_WORKSPACE_KEY } from "../../functions/config/bundled-workspace.ts";
import { loadBundleInputs } from "../../scripts/lib/bundle-inputs.ts";
import { ConfigFileError } from "../../scripts/lib/config-file.ts";
import { bundleDefineArgs, runWrangler } from "../../scripts/lib/wrangler.ts";
import { projectRoot, tempProject } from "./helpers.ts";

describe("workspace seed", () => {
  it("bundles workspace/ (nested, text only, no dotfiles) and each agent's own folder", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ agents: { list: [{ id: "main" }, { id: "ops", workspace: "ops-seed" }] } }`,
      "workspace/AGENTS.md": "# rules\n",
      "workspace/memory/2026-01-02.md": "met Ana ☕\n",
      "workspace/.DS_Store": "junk",
      "workspace/logo.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]),
      "ops-seed/SOUL.md": "terse\n",
      "outside.md": "secret plans",
    });
    symlinkSync(join(cwd, "outside.md"), join(cwd, "workspace", "linked.md"));
    const inputs = loadBundleInputs({ cwd, env: {} });
    assert.deepEqual(inputs.workspace.seeds, {
      [DEFAULT_WORKSPACE_KEY]: { "AGENTS.md": "# rules\n", "memory/2026-01-02.md": "met Ana ☕\n" },
      ops: { "SOUL.md": "terse\n" },
    });
    assert.ok(
      inputs.warnings.some(
        (line) => line.includes("logo.png") && line.includes("not a UTF-8 text file"),
      ),
    );
    assert.ok(
      inputs.warnings.some((line) => line.includes("linked.md") && line.includes("outside")),
    );
  });

  it("has no seed (and no error) when there is no workspace/ folder", () => {
    const inputs = loadBundleInputs({ cwd: tempProject(), env: {} });
    assert.deepEqual(inputs.workspace.seeds, {});
  });

  it("rejects a seed file over the per-file limit", () => {
    const cwd = tempProject({ "workspace/big.md": "x".repeat(1024 * 1024 + 1) });
    assert.throws(
      () => loadBundleInputs({ cwd, env: {} }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigFileError);
        assert.match(error.lines[0]!, /big\.md: 1048577 bytes, more than the 1048576-byte limit/);
        return true;
      },
    );
  });

  it("warns when a secret is written into the config as plain text", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ gateway: { auth: { token: "hunter2hunter2" } }, models: { providers: { anthropic: { apiKey: { source: "env", id: "ANTHROPIC_API_KEY" } } } } }`,
    });
    const { warnings } = loadBundleInputs({ cwd, env: {} });
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /^gateway\.auth\.token: a plain secret string is bundled/);
  });
});

describe("bundled defines reach the Worker code", () => {
  it("bundleDefineArgs → wrangler build → bundledWorkspace() / configFromEnv() return the bundled values", async () => {
    const out = tempProject({});
    const wranglerConfig = join(out, "wrangler.json");
    writeFileSync(
      wranglerConfig,
      JSON.stringify({
        name: "define-probe",
        main: join(projectRoot, "test/scripts/fixtures/define-probe.ts"),
        compatibility_date: "2026-04-20",
        compatibility_flags: ["nodejs_compat"],
      }),
    );
    const seeds = {
      [DEFAULT_WORKSPACE_KEY]: { "AGENTS.md": 'line 1\nline 2 \u2028 "quoted" `tick`\n' },
      ops: { "SOUL.md": "terse" },
    };
    const args = bundleDefineArgs({ messages: { queue: { mode: "collect" } } }, seeds);
    mkdirSync(join(out, "dist"));
    const run = await runWrangler(
      ["deploy", "--dry-run", "-c", wranglerConfig, "--outdir", join(out, "dist"), ...args],
      { cwd: out },
    );
    assert.equal(run.code, 0, run.output);
    const probe = (await import(pathToFileURL(join(out, "dist", "define-probe.js")).href)) as {
      default: { fetch(): Promise<Response> };
    };
    const body = (await (await probe.default.fetch()).json()) as Record<string, unknown>;
    assert.deepEqual(body, {
      workspace: seeds,
      opsSeed: seeds.ops,
      mainSeed: seeds[DEFAULT_WORKSPACE_KEY],
      queueMode: "collect",
    });
  });
});
