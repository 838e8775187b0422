import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { channelSimulators } from "../../scripts/simulate/registry.ts";
import { startFakeModelServer } from "../fakes/model-server.ts";
import { projectRoot, tempProject, edgeclawBin } from "./helpers.ts";

/**
 * Every simulated channel answered by a configured OpenAI-compatible provider (the loopback fake
 * model server), not the in-Worker demo model, with the channel blocks a user writes
 * (`channels: { line: {} }`: the defaults, dmPolicy "pairing" and groups allowlist-only): a
 * stranger's first DM gets the pairing code and `simulate` says why the agent did not answer and
 * how to let the sender in; after `pairing approve` the provider answers; a group message that is
 * not allowlisted is refused at once with the reason and the config key, not after `--timeout`.
 */
let dev: ChildProcess | undefined;
let output = "";
let model: Awaited<ReturnType<typeof startFakeModelServer>>;
let env: NodeJS.ProcessEnv;

/** A group of each simulated channel that has one (SMS has none); Telegram's ids are negative. */
const GROUPS: Record<string, string[]> = {
  slack: ["--group", "C0TEAM", "<@UBOTTEST> hi"],
  telegram: ["--group=-1001234567890", "@edgeclaw_sim_bot hi"],
  line: ["--group", "C0123456789abcdef0123456789abcdef", "@edgeclaw hi"],
  googlechat: ["--group", "spaces/AAAA", "@edgeclaw hi"],
  feishu: ["--group", "oc_team", "@edgeclaw hi"],
  msteams: ["--group", "19:abc@thread.tacv2", "@edgeclaw hi"],
  discord: ["--group", "1300000000000000011", "<@1100000000000000001> hi"],
  mattermost: ["--group", "mmteamchannel0000000000000", "@edgebot hi"],
  matrix: ["--group", "!team:fake.test", "@edgebot:fake.test hi"],
  signal: ["--group", "c2ltdWxhdGVkLWdyb3Vw", "+15550000001 hi"],
};

/** Each channel's group allowlist, as the refusal names it. */
const GROUP_KEYS: Record<string, string> = { slack: "channels", discord: "guilds" };
/** How a channel's message went in: the webhook's 200, or over the companion's socket. */
const OVER_COMPANION = new Set(["discord", "mattermost", "matrix", "signal"]);

before(async () => {
  model = await startFakeModelServer();
  // Feishu's block needs its mode: OpenClaw's default (websocket) is not served by the Worker.
  const channels = channelSimulators
    .map((s) => `${s.id}: ${s.id === "feishu" ? `{ connectionMode: "webhook" }` : "{}"}`)
    .join(", ");
  const project = tempProject({
    "edgeclaw.json5": `{
      agents: { defaults: { model: "local/echo" } },
      models: { providers: { local: { baseUrl: "${model.url}/v1", api: "openai-completions",
        apiKey: { source: "env", id: "LOCAL_MODEL_KEY" }, models: [{ id: "echo" }] } } },
      channels: { ${channels} },
    }`,
  });
  const port = await freePort("127.0.0.1");
  env = {
    ...process.env,
    EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
    EDGECLAW_DATA_DIR: join(project, "data"),
    EDGECLAW_PORT: String(port),
    EDGECLAW_SIMULATE: "1",
    EDGECLAW_FAKE_MODEL: "",
    LOCAL_MODEL_KEY: "sk-local-test",
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    EDGECLAW_GATEWAY_TOKEN: "",
    OPENCLAW_GATEWAY_TOKEN: "",
    WRANGLER_SEND_METRICS: "false",
  };
  dev = spawn(process.execPath, ["--import", "tsx", "scripts/dev.ts"], {
    cwd: projectRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env,
  });
  dev.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  dev.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const until = Date.now() + 240_000;
  while (!/Simulated mattermost at/.test(output)) {
    assert.ok(Date.now() < until && dev.exitCode === null, `dev did not get ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
});

after(async () => {
  if (dev?.pid && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev!.once("exit", resolve));
    process.kill(-dev.pid, "SIGINT");
    await exited;
  }
  await model?.stop();
});

function edgeclaw(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [edgeclawBin, ...args], {
      cwd: projectRoot,
      env,
    });
    let [stdout, stderr] = ["", ""];
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("exit", (status) => resolve({ status, stdout, stderr }));
  });
}

async function providerSaw(text: string): Promise<boolean> {
  const requests = (await (await fetch(`${model.url}/_control/requests`)).json()) as {
    requests: Array<{ body: unknown }>;
  };
  return requests.requests.some((request) => JSON.stringify(request.body).includes(text));
}

/**
 * Channels at once, each channel's own tests in order: a channel's conversations, pairing codes and
 * fake platform are its own, and each test spends most of its time in `simulate`'s quiet window
 * (1.5 s without a new reply), so one after another took about 70 s of mostly waiting.
 */
const CHANNELS_AT_ONCE = 4;

describe("every simulated channel with a configured provider model and the default access rules", {
  timeout: 900_000,
  concurrency: CHANNELS_AT_ONCE,
}, () => {
  it("the simulated stack names no missing secret for a simulated channel", () => {
    assert.doesNotMatch(output, /channels\.\w+: (missing|not served)/, output);
  });

  for (const simulator of channelSimulators) {
    const id = simulator.id;
    describe(id, { concurrency: false }, () => channelTests(id));
  }
});

function channelTests(id: string): void {
  it(`${id}: a stranger is told about pairing; once approved, the provider answers`, {
    timeout: 180_000,
  }, async () => {
    const first = `hello ${id} from a stranger`;
    const stranger = await edgeclaw(["simulate", id, "--timeout", "60", first]);
    const log = `${stranger.stdout}\n${stranger.stderr}\n--- dev:\n${output}`;
    assert.equal(stranger.status, 0, log);
    assert.match(stranger.stdout, new RegExp(`^${id} ▸ .*access not configured`, "m"), log);
    assert.match(
      stranger.stdout,
      new RegExp(
        `not answered by the agent: the sender is not allowed yet \\(dmPolicy pairing\\).*npx edgeclaw pairing approve ${id} <code>.*channels\\.${id}\\.allowFrom`,
      ),
      log,
    );
    assert.equal(await providerSaw(first), false, "a stranger's text reached the model");
    const code = /Pairing code: ([A-Z0-9]{8})/.exec(stranger.stdout)?.[1];
    assert.ok(code, log);
    const approved = await edgeclaw(["pairing", "approve", id, code]);
    assert.equal(approved.status, 0, `${approved.stdout}\n${approved.stderr}`);

    const text = `hello ${id} from a provider test`;
    const result = await edgeclaw(["simulate", id, "--timeout", "60", text]);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}\n--- dev:\n${output}`);
    assert.match(result.stdout, new RegExp(`^${id} ▸ You said: `, "m"));
    assert.match(result.stdout, new RegExp(text));
    assert.ok(await providerSaw(text), `the provider never saw "${text}"`);
  });

  const group = GROUPS[id];
  if (!group) return;
  it(`${id}: a group that is not allowlisted is refused at once, with the reason and the key`, {
    timeout: 60_000,
  }, async () => {
    const started = Date.now();
    const result = await edgeclaw(["simulate", id, "--timeout", "45", ...group]);
    const log = `${result.stdout}\n${result.stderr}\n--- dev:\n${output}`;
    assert.equal(result.status, 1, log);
    const delivered = OVER_COMPANION.has(id) ? "over the companion" : "200";
    assert.match(
      result.stdout,
      new RegExp(
        `^delivered \\(${delivered}\\); refused by the access policy: groupPolicy allowlist with an empty allowlist blocks every group$`,
        "m",
      ),
      log,
    );
    assert.match(
      result.stdout,
      new RegExp(
        `^ {2}the config key that would change it: channels\\.${id}\\.${GROUP_KEYS[id] ?? "groups"}$`,
        "m",
      ),
      log,
    );
    assert.ok(
      Date.now() - started < 30_000,
      `took ${Date.now() - started} ms: waited out the timeout`,
    );
  });
}
