import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { channelSimulators } from "../../scripts/simulate/registry.ts";
import { startFakeModelServer } from "../fakes/model-server.ts";
import { projectRoot, tempProject, tsxCli } from "./helpers.ts";

/**
 * Every simulated channel answered by a configured OpenAI-compatible provider (the loopback fake
 * model server), not the in-Worker demo model: `EDGECLAW_SIMULATE=1 npm run dev` with
 * `agents.defaults.model` on a `models.providers` entry, then `edgeclaw simulate <channel> "…"`
 * for each channel must print the provider's answer, and the provider must have been called once
 * per channel.
 */
const OPEN = `{ dmPolicy: "open", allowFrom: ["*"] }`;
let dev: ChildProcess | undefined;
let output = "";
let model: Awaited<ReturnType<typeof startFakeModelServer>>;
let env: NodeJS.ProcessEnv;

before(async () => {
  model = await startFakeModelServer();
  const channels = channelSimulators.map((s) => `${s.id}: ${OPEN}`).join(", ");
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
  while (!/Simulated msteams at/.test(output)) {
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

function simulate(
  args: string[],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsxCli, "scripts/cli.ts", "simulate", ...args], {
      cwd: projectRoot,
      env,
    });
    let [stdout, stderr] = ["", ""];
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("exit", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("every simulated channel with a configured provider model", { timeout: 600_000 }, () => {
  for (const simulator of channelSimulators) {
    it(`${simulator.id}: the provider answers a simulated DM`, { timeout: 120_000 }, async () => {
      const text = `hello ${simulator.id} from a provider test`;
      const result = await simulate([simulator.id, "--timeout", "60", text]);
      assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}\n--- dev:\n${output}`);
      assert.match(result.stdout, new RegExp(`^${simulator.id} ▸ You said: `, "m"));
      assert.match(result.stdout, new RegExp(text));
      const requests = (await (await fetch(`${model.url}/_control/requests`)).json()) as {
        requests: Array<{ body: unknown }>;
      };
      assert.ok(
        requests.requests.some((request) => JSON.stringify(request.body).includes(text)),
        `the provider never saw "${text}"`,
      );
    });
  }
});
