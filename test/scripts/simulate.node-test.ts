import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { verifySlackSignature } from "../../functions/channels/slack/verify.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { simulator as slackSimulator } from "../../functions/channels/slack/simulate/simulator.ts";
import { projectRoot, tempProject, edgeclawBin } from "./helpers.ts";

/**
 * `npx edgeclaw simulate`: the Slack simulator signs exactly as Slack does (checked by the Worker's
 * own verifier), reads replies back from the fake as Slack shows them, and — end to end — a real
 * `EDGECLAW_SIMULATE=1 npm run dev` answers a simulated DM that the CLI then prints.
 */
const running: ChildProcess[] = [];
after(() => {
  for (const child of running)
    if (child.exitCode === null && child.pid) tryKill(-child.pid, "SIGKILL");
});

function tryKill(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}

describe("Slack simulator", () => {
  it("points every account at the fake and generates only the secrets that are not set", () => {
    const fresh = slackSimulator.prepare(
      { accounts: { ops: { webhookPath: "/slack/ops" } } },
      "http://127.0.0.1:9",
      {},
    );
    assert.equal(fresh.block.apiBaseUrl, "http://127.0.0.1:9/api/");
    assert.equal(
      (fresh.block.accounts as Record<string, { apiBaseUrl: string }>).ops!.apiBaseUrl,
      "http://127.0.0.1:9/api/",
    );
    assert.match(fresh.env.SLACK_SIGNING_SECRET!, /^sim-[0-9a-f]{32}$/);
    assert.match(fresh.env.SLACK_BOT_TOKEN!, /^xoxb-sim-/);
    assert.equal(fresh.secrets.signingSecret, fresh.env.SLACK_SIGNING_SECRET);

    const given = slackSimulator.prepare(
      { signingSecret: { source: "env", id: "MY_SECRET" } },
      "http://127.0.0.1:9",
      { MY_SECRET: "mine", SLACK_BOT_TOKEN: "xoxb-mine" },
    );
    assert.deepEqual(given.env, {});
    assert.equal(given.secrets.signingSecret, "mine");
    const unset = slackSimulator.prepare(
      { signingSecret: { source: "env", id: "MY_SECRET" } },
      "http://127.0.0.1:9",
      {},
    );
    assert.equal(unset.env.MY_SECRET, unset.secrets.signingSecret);
  });

  it("signs a webhook the Worker's verifier accepts, and only with the right secret", async () => {
    const request = await slackSimulator.webhook(
      { text: "hi", group: "C0SIM", thread: "1700000000.000100" },
      {
        webhookUrl: "http://127.0.0.1:9/slack/events",
        secrets: { signingSecret: "s3cret" },
        fakeUrl: "",
      },
    );
    const raw = new Uint8Array(await request.arrayBuffer());
    assert.deepEqual(await verifySlackSignature(raw, request.headers, "s3cret", Date.now()), {
      ok: true,
    });
    assert.equal((await verifySlackSignature(raw, request.headers, "other", Date.now())).ok, false);
    const event = JSON.parse(new TextDecoder().decode(raw)) as {
      type: string;
      event: Record<string, string>;
    };
    assert.equal(event.type, "event_callback");
    assert.deepEqual(
      [event.event.channel, event.event.channel_type, event.event.thread_ts, event.event.text],
      ["C0SIM", "channel", "1700000000.000100", "hi"],
    );
  });

  it("reads the replies the fake received in the conversation, as Slack shows them", async () => {
    const fake = await slackSimulator.startFake();
    try {
      const post = (channel: string, text: string) =>
        fetch(`${fake.url}/api/chat.postMessage`, {
          method: "POST",
          headers: { authorization: "Bearer xoxb-sim-x", "content-type": "application/json" },
          body: JSON.stringify({ channel, text }),
        });
      assert.equal((await post("D0SIMUSER", "a &lt;b&gt; &amp; c")).status, 200);
      await post("C0OTHER", "elsewhere");
      assert.deepEqual(await slackSimulator.replies(fake.url, { text: "x" }), ["a <b> & c"]);
      assert.deepEqual(await slackSimulator.replies(fake.url, { text: "x", group: "C0OTHER" }), [
        "elsewhere",
      ]);
    } finally {
      await fake.stop();
    }
  });
});

describe("edgeclaw simulate against EDGECLAW_SIMULATE=1 npm run dev", () => {
  it("delivers a signed DM and prints the reply the simulated Slack received", {
    timeout: 180_000,
  }, async () => {
    const project = tempProject({
      "edgeclaw.json5": `{ channels: { slack: { dmPolicy: "open", allowFrom: ["*"] } } }`,
    });
    const dataDir = join(project, "data");
    const port = await freePort("127.0.0.1");
    const env = {
      ...process.env,
      EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
      EDGECLAW_DATA_DIR: dataDir,
      EDGECLAW_PORT: String(port),
      EDGECLAW_SIMULATE: "1",
      EDGECLAW_FAKE_MODEL: "1",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
      SLACK_SIGNING_SECRET: "",
      SLACK_BOT_TOKEN: "",
      WRANGLER_SEND_METRICS: "false",
    };
    const dev = spawn(process.execPath, ["--import", "tsx", "scripts/dev.ts"], {
      cwd: projectRoot,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env,
    });
    running.push(dev);
    let output = "";
    dev.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    dev.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const until = Date.now() + 150_000;
    while (!/Simulated slack at/.test(output)) {
      assert.ok(Date.now() < until && dev.exitCode === null, `dev did not get ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    assert.match(output, /try: npx edgeclaw simulate slack "hello"/);

    const cli = spawnSync(
      process.execPath,
      [edgeclawBin, "simulate", "slack", "--from", "U0ANA", "hello from the simulator"],
      { cwd: projectRoot, env, encoding: "utf8", timeout: 90_000 },
    );
    assert.equal(cli.status, 0, `${cli.stdout}\n${cli.stderr}`);
    assert.match(cli.stdout, /^slack ▸ \[edgeclaw fake model\] You said: /m);
    assert.match(cli.stdout, /hello from the simulator/);
    assert.doesNotMatch(cli.stdout, /&lt;/);

    const unknown = spawnSync(process.execPath, [edgeclawBin, "simulate", "carrier-pigeon", "hi"], {
      cwd: projectRoot,
      env,
      encoding: "utf8",
    });
    assert.equal(unknown.status, 2, "an unknown channel is a usage error");
    assert.match(unknown.stderr, /no simulator for "carrier-pigeon"/);

    const exited = new Promise((resolve) => dev.once("exit", resolve));
    tryKill(-dev.pid!, "SIGINT");
    await exited;
    const afterStop = spawnSync(process.execPath, [edgeclawBin, "simulate", "slack", "hi"], {
      cwd: projectRoot,
      env,
      encoding: "utf8",
    });
    assert.equal(afterStop.status, 1);
    assert.match(afterStop.stderr, /no simulated platforms running/);
  });
});
