import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { after, describe, it } from "node:test";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { withNeonPool } from "../../scripts/lib/neon-node.ts";
import { ctrlC, devCommand, killAtEnd, killStartedDevs, startDev, tryKill } from "./dev-process.ts";
import { projectRoot, tempProject } from "./helpers.ts";

/**
 * `npm run dev` end to end: the real wrangler + workerd + PGlite, started the way a user does and
 * stopped the way Ctrl-C does (SIGINT to the whole process group). The stack is started by
 * dev-process.ts, as the control-page test starts it.
 */

/** wrangler groups seen, killed at the end should a failing test have left them. */
const wranglerGroupsSeen = new Set<number>();
after(() => {
  killStartedDevs();
  for (const pgid of wranglerGroupsSeen) if (groupAlive(pgid)) tryKill(-pgid, "SIGKILL");
});

/** Process groups of wrangler processes serving this data dir (workerd shares the group). */
function wranglerGroups(dataDir: string): Set<number> {
  const lines = execFileSync("ps", ["-eo", "pgid=,stat=,args="], { encoding: "utf8" }).split("\n");
  const groups = new Set(
    lines
      .filter((line) => line.includes(`${dataDir}/wrangler`) && !/^\s*\d+\s+Z/.test(line))
      .map((line) => Number.parseInt(line.trim(), 10)),
  );
  for (const pgid of groups) wranglerGroupsSeen.add(pgid);
  return groups;
}

/** True while a live (not zombie: some sandboxes' init never reaps) process is in the group. */
function groupAlive(pgid: number): boolean {
  const lines = execFileSync("ps", ["-eo", "pgid=,stat="], { encoding: "utf8" }).split("\n");
  return lines.some((line) => {
    const [group, stat] = line.trim().split(/\s+/);
    return Number(group) === pgid && !stat?.startsWith("Z");
  });
}

describe("npm run dev", { concurrency: false }, () => {
  it("fails fast on a bad config with the key-path lines and exit 1", () => {
    const dir = tempProject({ "bad.json5": `{ session: { dmScope: "everyone" } }` });
    const [program, ...args] = devCommand();
    const run = spawnSync(program!, args, {
      cwd: projectRoot,
      encoding: "utf8",
      timeout: 30_000,
      env: {
        ...process.env,
        EDGECLAW_CONFIG: join(dir, "bad.json5"),
        EDGECLAW_DATA_DIR: join(dir, "data"),
      },
    });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /^ {2}session\.dmScope: /m);
    assert.equal(existsSync(join(dir, "data")), false, "nothing started");
  });

  it("dies whole on SIGKILL to its group; the next start names what still holds the data dir, then runs", async () => {
    const project = tempProject({
      "edgeclaw.json5": `{ channels: { slack: { accounts: { default: {}, ops: { webhookPath: "/slack/ops" } } } } }`,
    });
    const dataDir = join(project, "data");
    const port = await freePort();
    const first = await startDev(dataDir, port, {
      EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
      ANTHROPIC_API_KEY: "sk-ant-banner-test",
      OPENAI_API_KEY: "",
      EDGECLAW_FAKE_MODEL: "",
    });
    // The banner: the model a key alone gives, and every URL to hand out.
    const url = `http://127.0.0.1:${port}`;
    assert.match(
      first.output(),
      /^ {2}Model: anthropic\/claude-sonnet-\S+ \(default for the anthropic API key/m,
    );
    assert.match(
      first.output(),
      new RegExp(`^  Slack \\(account default\\): ${url}/slack/events$`, "m"),
    );
    assert.match(first.output(), new RegExp(`^  Slack \\(account ops\\): ${url}/slack/ops$`, "m"));
    assert.match(first.output(), new RegExp(`^  OpenAI API: ${url}/v1/chat/completions `, "m"));
    assert.doesNotMatch(first.output(), /No model configured/);
    const groups = wranglerGroups(dataDir);
    assert.equal(groups.size, 1, "one wrangler process group");

    // A crash, an OOM kill or a harness's hard stop: no handler of dev's runs.
    const killed = new Promise((resolve) => first.child.once("exit", resolve));
    tryKill(-first.child.pid!, "SIGKILL");
    await killed;
    const deadline = Date.now() + 15_000;
    while ([...groups].some(groupAlive) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    for (const pgid of groups)
      assert.equal(groupAlive(pgid), false, "wrangler and workerd died with dev");

    // Something still holding a file under the data dir (as an orphaned workerd would) is named.
    mkdirSync(join(dataDir, "wrangler"), { recursive: true });
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `require("node:fs").openSync(process.argv[1], "w"); console.log("open"); setInterval(() => {}, 1000)`,
        join(dataDir, "wrangler", "held"),
      ],
      {
        detached: true,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    killAtEnd(holder);
    await new Promise((resolve) => holder.stdout!.once("data", resolve));
    const [program, ...args] = devCommand();
    const refused = spawnSync(program!, args, {
      cwd: projectRoot,
      encoding: "utf8",
      timeout: 30_000,
      env: {
        ...process.env,
        EDGECLAW_DATA_DIR: dataDir,
        EDGECLAW_PORT: String(port),
        EDGECLAW_CONFIG: "",
      },
    });
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`left behind:\\n  pid ${holder.pid} `));
    tryKill(-holder.pid!, "SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));

    // The dead run's lock does not stand in the way, and its data is usable.
    const second = await startDev(dataDir, port);
    assert.equal((await fetch(`${second.url}/health`)).status, 200);
    assert.equal(await ctrlC(second), 0);
  });

  it("starts, answers /health, stops on Ctrl-C (even mid-query) leaving no process, and keeps its data for the next start", async () => {
    const dataDir = join(tempProject(), "data");
    const port = await freePort();

    const first = await startDev(dataDir, port, {
      EDGECLAW_FAKE_MODEL: "",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
    });
    assert.equal(first.url, `http://127.0.0.1:${port}`);
    const health = await fetch(`${first.url}/health`);
    assert.equal(health.status, 200);
    const token = /Gateway token: (\S+) \(generated/.exec(first.output())?.[1];
    assert.ok(token, first.output());
    assert.match(first.output(), /^No model configured: /m);
    // No socket account (Discord, Slack socket mode, Telegram polling, Mattermost): no companion.
    assert.doesNotMatch(first.output(), /Companion:/);
    assert.equal(existsSync(join(dataDir, "companion")), false);

    const vars = parseEnv(readFileSync(join(dataDir, "dev-secrets.env"), "utf8"));
    assert.equal(vars.EDGECLAW_GATEWAY_TOKEN, token);
    await withNeonPool(vars.DATABASE_URL!, vars.EDGECLAW_PG_WS_PROXY, (pool) =>
      pool.query(`insert into gateway_state (key, value) values ('dev-test', '{"kept":true}')`),
    );
    const groups = wranglerGroups(dataDir);
    assert.equal(groups.size, 1, "one wrangler process group");

    // Ctrl-C while PGlite (in dev's own thread) is busy with a query: dev still gets to stop
    // everything itself. (Under tsx's signal relay, a child that does not answer within 30 ms is
    // SIGKILLed: exit 130 and wrangler/workerd left running.)
    const busy = withNeonPool(vars.DATABASE_URL!, vars.EDGECLAW_PG_WS_PROXY, (pool) =>
      pool.query("select count(*) from generate_series(1, 3000000)"),
    ).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await ctrlC(first), 0);
    await busy;
    for (const pgid of groups)
      assert.equal(groupAlive(pgid), false, "wrangler and workerd are gone");
    assert.equal(existsSync(join(dataDir, "dev.lock")), false);
    assert.equal(existsSync(join(dataDir, "dev-secrets.env")), false, "secrets file removed");

    const second = await startDev(dataDir, port, {
      EDGECLAW_FAKE_MODEL: "1",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
    });
    assert.match(second.output(), new RegExp(`Gateway token: ${token} \\(kept in`));
    assert.match(second.output(), /^ {2}Model: fake\/edgeclaw-demo \(the scripted demo model/m);
    const secondVars = parseEnv(readFileSync(join(dataDir, "dev-secrets.env"), "utf8"));
    const rows = await withNeonPool(
      secondVars.DATABASE_URL!,
      secondVars.EDGECLAW_PG_WS_PROXY,
      (pool) => pool.query(`select value from gateway_state where key = 'dev-test'`),
    );
    assert.deepEqual(rows.rows, [{ value: { kept: true } }]);

    // A second instance on the same data dir is refused; on its own dir and port it runs alongside.
    const [program, ...args] = devCommand();
    const clash = spawnSync(program!, args, {
      cwd: projectRoot,
      encoding: "utf8",
      timeout: 30_000,
      env: {
        ...process.env,
        EDGECLAW_DATA_DIR: dataDir,
        EDGECLAW_PORT: String(await freePort()),
        EDGECLAW_CONFIG: "",
      },
    });
    assert.equal(clash.status, 1);
    assert.match(clash.stderr, /is in use by another `npm run dev`/);

    // The CLI against the live instance: tables for people, --json for scripts, the server's reason
    // and a non-zero exit on failure.
    const cli = (...args: string[]) =>
      spawnSync(
        process.execPath,
        [join(projectRoot, "bin", "edgeclaw.mjs"), ...args, "--url", second.url],
        {
          cwd: projectRoot,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, EDGECLAW_GATEWAY_TOKEN: token },
        },
      );
    const agents = cli("agents", "list");
    assert.equal(agents.status, 0, agents.stderr);
    assert.match(agents.stdout, /\bmain\b/);
    const sessions = cli("sessions", "list", "--json");
    assert.equal(sessions.status, 0, sessions.stderr);
    assert.ok(Array.isArray((JSON.parse(sessions.stdout) as { sessions: unknown[] }).sessions));
    const approve = cli("pairing", "approve", "slack", "ZZZZZZZZ");
    assert.notEqual(approve.status, 0);
    assert.match(approve.stderr, /code|pairing/i);
    const denied = cli("agents", "list", "--token", "wrong-token");
    assert.notEqual(denied.status, 0);
    assert.match(denied.stderr, /401|token|unauthori/i);

    // With no --url and no token, the CLI finds this dev stack (URL, generated token) in its data dir.
    const local = (...args: string[]) =>
      spawnSync(process.execPath, [join(projectRoot, "bin", "edgeclaw.mjs"), ...args], {
        cwd: projectRoot,
        encoding: "utf8",
        timeout: 60_000,
        env: {
          ...process.env,
          EDGECLAW_DATA_DIR: dataDir,
          EDGECLAW_URL: "",
          EDGECLAW_GATEWAY_TOKEN: "",
          OPENCLAW_GATEWAY_TOKEN: "",
        },
      });
    const found = local("agents", "list");
    assert.equal(found.status, 0, found.stderr);
    assert.match(found.stdout, /\bmain\b.*fake\/edgeclaw-demo/);
    // A conversation with the demo model, read back turn by turn (not as stored JSON).
    const chat = await fetch(`${second.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "openclaw/default",
        user: "cli-reader",
        messages: [{ role: "user", content: "hello from the cli test" }],
      }),
    });
    assert.equal(chat.status, 200, await chat.clone().text());
    let shown = local("sessions", "show", "agent:main:openai-user:cli-reader");
    for (let tries = 0; tries < 40 && !/ assistant:/.test(shown.stdout); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      shown = local("sessions", "show", "agent:main:openai-user:cli-reader");
    }
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /^\[[^\]]+\] #\d+ user:\n {4}hello from the cli test$/m);
    assert.match(shown.stdout, /^\[[^\]]+\] #\d+ assistant:\n {4}\S/m);
    assert.doesNotMatch(shown.stdout, /"role"/);

    const otherDir = join(tempProject(), "data");
    const other = await startDev(otherDir, await freePort());
    assert.equal((await fetch(`${other.url}/health`)).status, 200);
    assert.equal((await fetch(`${second.url}/health`)).status, 200);

    assert.equal(await ctrlC(other), 0);
    assert.equal(await ctrlC(second), 0);
    assert.equal(wranglerGroups(dataDir).size + wranglerGroups(otherDir).size, 0);
  });
});
