import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ConfigFileError, loadConfigFile } from "../../scripts/lib/config-file.ts";
import { projectRoot, tempProject, tsxCli } from "./helpers.ts";

function configError(run: () => unknown): ConfigFileError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ConfigFileError, `expected ConfigFileError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the config to be rejected");
}

describe("loadConfigFile", () => {
  it("uses the defaults when there is no edgeclaw.json5", () => {
    const cwd = tempProject();
    const loaded = loadConfigFile({ cwd, env: {} });
    assert.equal(loaded.file, undefined);
    assert.equal(loaded.config.messages.queue.mode, "steer");
    assert.equal(loaded.config.agents.defaults.timeoutSeconds, 172_800);
  });

  it("reads JSON5 from ./edgeclaw.json5 (comments, unquoted keys, trailing commas)", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `// my gateway\n{ messages: { queue: { mode: "collect", debounceMs: 900, }, }, }\n`,
    });
    const loaded = loadConfigFile({ cwd, env: {} });
    assert.equal(loaded.file, join(cwd, "edgeclaw.json5"));
    assert.equal(loaded.config.messages.queue.mode, "collect");
    assert.equal(loaded.config.messages.queue.debounceMs, 900);
    assert.deepEqual(loaded.raw, { messages: { queue: { mode: "collect", debounceMs: 900 } } });
  });

  it("prefers the file EDGECLAW_CONFIG names, and fails when it does not exist", () => {
    const cwd = tempProject({ "edgeclaw.json5": "{}", "conf/other.json5": `{ session: { dmScope: "per-peer" } }` });
    const loaded = loadConfigFile({ cwd, env: { EDGECLAW_CONFIG: "conf/other.json5" } });
    assert.equal(loaded.config.session.dmScope, "per-peer");
    assert.equal(loaded.baseDir, join(cwd, "conf"));
    const error = configError(() => loadConfigFile({ cwd, env: { EDGECLAW_CONFIG: "missing.json5" } }));
    assert.match(error.lines[0]!, /file not found/);
  });

  it("reports a syntax error with line and column", () => {
    const cwd = tempProject({ "edgeclaw.json5": `{\n  messages: {\n    queue: { mode: "collect" ,, }\n  }\n}\n` });
    const error = configError(() => loadConfigFile({ cwd, env: {} }));
    assert.equal(error.file, join(cwd, "edgeclaw.json5"));
    assert.match(error.lines[0]!, /^3:\d+: invalid character ','/);
  });

  it("reports each invalid key as `<key.path>: <reason>`", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ messages: { queue: { mode: "sometimes" } }, agents: { defaults: { timeoutSeconds: -5 } } }`,
    });
    const error = configError(() => loadConfigFile({ cwd, env: {} }));
    assert.ok(error.lines.some((line) => line.startsWith("messages.queue.mode: ")), error.lines.join("\n"));
    assert.ok(error.lines.some((line) => line.startsWith("agents.defaults.timeoutSeconds: ")), error.lines.join("\n"));
  });

  it("rejects a file that is not an object", () => {
    const cwd = tempProject({ "edgeclaw.json5": `["not", "a", "config"]` });
    assert.match(configError(() => loadConfigFile({ cwd, env: {} })).lines[0]!, /expected an object/);
  });
});

describe("npm run config:check", () => {
  const check = (cwd: string) =>
    spawnSync(process.execPath, [tsxCli, join(projectRoot, "scripts", "config-check.ts")], { cwd, encoding: "utf8", env: { ...process.env, EDGECLAW_CONFIG: "" } });

  it("prints `config OK (<file>)` and exits 0 for a valid config", () => {
    const cwd = tempProject({ "edgeclaw.json5": `{ session: { dmScope: "main" } }` });
    const run = check(cwd);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), `config OK (${join(cwd, "edgeclaw.json5")})`);
  });

  it("prints the key-path lines and exits 1 for an invalid one", () => {
    const cwd = tempProject({ "edgeclaw.json5": `{ messages: { queue: { debounceMs: "soon" } } }` });
    const run = check(cwd);
    assert.equal(run.status, 1);
    assert.match(run.stderr, new RegExp(`invalid config in ${join(cwd, "edgeclaw.json5")}`));
    assert.match(run.stderr, /^  messages\.queue\.debounceMs: /m);
  });

  it("fails on a seed folder the config names but that does not exist", () => {
    const cwd = tempProject({ "edgeclaw.json5": `{ agents: { list: [{ id: "ops", workspace: "ops-workspace" }] } }` });
    const run = check(cwd);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /agents\.list\.0\.workspace: folder not found: .*ops-workspace/);
  });
});
