import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
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
    const cwd = tempProject({
      "edgeclaw.json5": "{}",
      "conf/other.json5": `{ session: { dmScope: "per-peer" } }`,
    });
    const loaded = loadConfigFile({ cwd, env: { EDGECLAW_CONFIG: "conf/other.json5" } });
    assert.equal(loaded.config.session.dmScope, "per-peer");
    assert.equal(loaded.baseDir, join(cwd, "conf"));
    const error = configError(() =>
      loadConfigFile({ cwd, env: { EDGECLAW_CONFIG: "missing.json5" } }),
    );
    assert.match(error.lines[0]!, /file not found/);
  });

  it("says to wrap the keys in braces when the file holds keys without the object around them", () => {
    const cwd = tempProject({ "edgeclaw.json5": "channels: { slack: {} }\n" });
    const error = configError(() => loadConfigFile({ cwd, env: {} }));
    assert.match(error.lines[0]!, /^1:1: invalid character 'c'/);
    assert.match(error.lines[1]!, /wrap what you wrote in \{ … \}/);
    const other = tempProject({ "edgeclaw.json5": "{ channels: { slack: {} }\n" });
    assert.equal(configError(() => loadConfigFile({ cwd: other, env: {} })).lines.length, 1);
  });

  it("reports a syntax error with line and column", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{\n  messages: {\n    queue: { mode: "collect" ,, }\n  }\n}\n`,
    });
    const error = configError(() => loadConfigFile({ cwd, env: {} }));
    assert.equal(error.file, join(cwd, "edgeclaw.json5"));
    assert.match(error.lines[0]!, /^3:\d+: invalid character ','/);
  });

  it("reports each invalid key as `<key.path>: <reason>`", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ messages: { queue: { mode: "sometimes" } }, agents: { defaults: { timeoutSeconds: -5 } } }`,
    });
    const error = configError(() => loadConfigFile({ cwd, env: {} }));
    assert.ok(
      error.lines.some((line) => line.startsWith("messages.queue.mode: ")),
      error.lines.join("\n"),
    );
    assert.ok(
      error.lines.some((line) => line.startsWith("agents.defaults.timeoutSeconds: ")),
      error.lines.join("\n"),
    );
  });

  it("rejects a file that is not an object", () => {
    const cwd = tempProject({ "edgeclaw.json5": `["not", "a", "config"]` });
    assert.match(
      configError(() => loadConfigFile({ cwd, env: {} })).lines[0]!,
      /expected an object/,
    );
  });
});

describe("npm run config:check", () => {
  const check = (cwd: string) =>
    spawnSync(process.execPath, [tsxCli, join(projectRoot, "scripts", "config-check.ts")], {
      cwd,
      encoding: "utf8",
      env: {
        ...process.env,
        EDGECLAW_CONFIG: "",
        LINE_CHANNEL_SECRET: "",
        LINE_CHANNEL_ACCESS_TOKEN: "",
      },
    });

  it("prints `config OK (<file>)` and exits 0 for a valid config", () => {
    const cwd = tempProject({ "edgeclaw.json5": `{ session: { dmScope: "main" } }` });
    const run = check(cwd);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), `config OK (${join(cwd, "edgeclaw.json5")})`);
  });

  it("prints the key-path lines and exits 1 for an invalid one", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ messages: { queue: { debounceMs: "soon" } } }`,
    });
    const run = check(cwd);
    assert.equal(run.status, 1);
    assert.match(run.stderr, new RegExp(`invalid config in ${join(cwd, "edgeclaw.json5")}`));
    assert.match(run.stderr, /^ {2}messages\.queue\.debounceMs: /m);
  });

  it("rejects typos — unknown keys at any depth — naming the closest key", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ sesion: { dmScope: "main" }, foo: 1, agents: { defaults: { modle: "anthropic/x" } }, channels: { slak: {}, slack: { dmPolcy: "open" } } }`,
    });
    const run = check(cwd);
    assert.equal(run.status, 1, run.stdout);
    assert.match(run.stderr, /^ {2}sesion: unknown key \(did you mean "session"\?\)$/m);
    assert.match(run.stderr, /^ {2}foo: unknown key$/m);
    assert.match(
      run.stderr,
      /^ {2}agents\.defaults\.modle: unknown key \(did you mean "model"\?\)$/m,
    );
    assert.match(run.stderr, /^ {2}channels\.slak: unknown key \(did you mean "slack"\?\)$/m);
    assert.match(
      run.stderr,
      /^ {2}channels\.slack\.dmPolcy: unknown key \(did you mean "dmPolicy"\?\)$/m,
    );
  });

  it("names each enabled channel's missing secrets (env fallbacks too) and a Feishu account nothing serves; .dev.vars counts", () => {
    const cwd = tempProject({ "edgeclaw.json5": `{ channels: { line: {}, feishu: {} } }` });
    const run = check(cwd);
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stderr,
      /^warning: channels\.line: no channel secret \(LINE_CHANNEL_SECRET is not set, nor channels\.line\.channelSecret\): every LINE webhook is refused \(401\)$/m,
    );
    assert.match(
      run.stderr,
      /^warning: channels\.line: no channel access token \(LINE_CHANNEL_ACCESS_TOKEN/m,
    );
    assert.match(
      run.stderr,
      /^warning: channels\.feishu: connectionMode is "websocket" .*set channels\.feishu\.connectionMode: "webhook"$/m,
    );
    assert.match(run.stderr, /looked up in \.dev\.vars and this shell/);
    writeFileSync(join(cwd, ".dev.vars"), "LINE_CHANNEL_SECRET=s\nLINE_CHANNEL_ACCESS_TOKEN=t\n");
    assert.doesNotMatch(check(cwd).stderr, /channels\.line: no /);
  });

  it("accepts OpenClaw keys edgeclaw does not implement yet, with a warning naming each", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ agents: { defaults: { fastModeDefault: "auto" } }, channels: { discord: { dmPolicy: "pairing", voice: { enabled: true } } } }`,
    });
    const run = check(cwd);
    assert.equal(run.status, 0, run.stderr);
    assert.match(
      run.stderr,
      /^warning: agents\.defaults\.fastModeDefault: an OpenClaw key edgeclaw does not implement yet; ignored$/m,
    );
    assert.match(
      run.stderr,
      /^warning: channels\.discord\.voice: an OpenClaw key edgeclaw does not implement yet; ignored$/m,
    );
  });

  it("wants a real IANA zone in userTimezone, and names the expected type instead of 'Invalid input'", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ agents: { defaults: { userTimezone: "Mars/Olympus", model: { primary: 5 } } }, gateway: { auth: { token: 42 } } }`,
    });
    const run = check(cwd);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /^ {2}agents\.defaults\.userTimezone: expected an IANA time zone/m);
    assert.match(
      run.stderr,
      /^ {2}agents\.defaults\.model\.primary: expected string, received number$/m,
    );
    assert.match(
      run.stderr,
      /^ {2}gateway\.auth\.token: expected string or object, received number$/m,
    );
    assert.doesNotMatch(run.stderr, /Invalid input/);
    assert.equal(
      check(
        tempProject({
          "edgeclaw.json5": `{ agents: { defaults: { userTimezone: "Europe/Berlin" } } }`,
        }),
      ).status,
      0,
    );
  });

  it("passes the shipped edgeclaw.example.json5 without errors or warnings", () => {
    const run = spawnSync(
      process.execPath,
      [tsxCli, join(projectRoot, "scripts", "config-check.ts")],
      {
        cwd: projectRoot,
        encoding: "utf8",
        env: { ...process.env, EDGECLAW_CONFIG: join(projectRoot, "edgeclaw.example.json5") },
      },
    );
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /warning: .*(unknown key|OpenClaw key)/);
  });

  it("fails on a seed folder the config names but that does not exist", () => {
    const cwd = tempProject({
      "edgeclaw.json5": `{ agents: { list: [{ id: "ops", workspace: "ops-workspace" }] } }`,
    });
    const run = check(cwd);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /agents\.list\.0\.workspace: folder not found: .*ops-workspace/);
  });
});
