import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { startDev, stopDev, type RunningDev } from "./dev-process.ts";
import { projectRoot, tempProject, edgeclawBin } from "./helpers.ts";

/**
 * `EDGECLAW_SIMULATE=1 EDGECLAW_FAKE_MODEL=1 npm run dev` on a config of the test's, as a user runs
 * it for `npx edgeclaw simulate`, and the CLI run against it. The platform secrets a developer may
 * have in the shell are blanked, so the simulated stack generates its own.
 */
export interface SimulatedStack {
  dev: RunningDev;
  env: NodeJS.ProcessEnv;
  edgeclaw(args: string[]): Promise<CliRun>;
  stop(): Promise<void>;
}

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout, stderr and the dev terminal, for a failure message. */
  log: string;
}

const BLANKED = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "EDGECLAW_GATEWAY_TOKEN",
  "OPENCLAW_GATEWAY_TOKEN",
  "DISCORD_BOT_TOKEN",
  "MATTERMOST_URL",
  "MATTERMOST_BOT_TOKEN",
  "SLACK_BOT_TOKEN",
  "SLACK_APP_TOKEN",
  "SLACK_SIGNING_SECRET",
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_WEBHOOK_SECRET",
];

/** Starts the stack and waits until it says it simulates `channel` (the companion is started by then). */
export async function startSimulatedStack(
  config: string,
  channel: string,
): Promise<SimulatedStack> {
  const project = tempProject({ "edgeclaw.json5": config });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(BLANKED.map((name) => [name, ""])),
    EDGECLAW_CONFIG: join(project, "edgeclaw.json5"),
    EDGECLAW_DATA_DIR: join(project, "data"),
    EDGECLAW_SIMULATE: "1",
    EDGECLAW_FAKE_MODEL: "1",
    WRANGLER_SEND_METRICS: "false",
  };
  const port = await freePort("127.0.0.1");
  env.EDGECLAW_PORT = String(port);
  const dev = await startDev(env.EDGECLAW_DATA_DIR!, port, env as Record<string, string>, 180_000);
  const until = Date.now() + 30_000;
  while (!new RegExp(`Simulated ${channel} at`).test(dev.output())) {
    assert.ok(Date.now() < until, `dev does not simulate ${channel}:\n${dev.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    dev,
    env,
    edgeclaw: (args) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [edgeclawBin, ...args], {
          cwd: projectRoot,
          env,
        });
        let [stdout, stderr] = ["", ""];
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.once("exit", (status) =>
          resolve({
            status,
            stdout,
            stderr,
            log: `${stdout}\n${stderr}\n--- dev:\n${dev.output().slice(-6000)}`,
          }),
        );
      }),
    stop: () => stopDev(dev, 20_000),
  };
}

/**
 * The path every simulated channel takes with the defaults a user gets (dmPolicy "pairing", groups
 * allowlist-only): a stranger's DM gets the pairing code and `simulate` says how to let them in;
 * once approved, the agent answers and `simulate` prints the reply the fake platform received; a
 * group nobody listed is refused at once with the reason and the key that would change it.
 */
export async function checkDefaultPath(
  stack: SimulatedStack,
  channel: string,
  options: { group: string[]; groupKey: string; from?: string[] },
): Promise<void> {
  const from = options.from ?? [];
  const stranger = await stack.edgeclaw(["simulate", channel, ...from, "--timeout", "60", "hi"]);
  assert.equal(stranger.status, 0, stranger.log);
  assert.match(stranger.stdout, new RegExp(`^${channel} ▸ .*access not configured`, "m"));
  assert.match(
    stranger.stdout,
    new RegExp(
      `not answered by the agent: the sender is not allowed yet \\(dmPolicy pairing\\).*npx edgeclaw pairing approve ${channel} <code>.*channels\\.${channel}\\.allowFrom`,
    ),
    stranger.log,
  );
  const code = /Pairing code: ([A-Z0-9]{8})/.exec(stranger.stdout)?.[1];
  assert.ok(code, stranger.log);
  const approved = await stack.edgeclaw(["pairing", "approve", channel, code]);
  assert.equal(approved.status, 0, approved.log);

  const text = `hello ${channel} over the companion`;
  const answered = await stack.edgeclaw(["simulate", channel, ...from, "--timeout", "60", text]);
  assert.equal(answered.status, 0, answered.log);
  assert.match(
    answered.stdout,
    new RegExp(`^${channel} ▸ \\[edgeclaw fake model\\] You said: ${text}$`, "m"),
    answered.log,
  );

  const started = Date.now();
  const group = await stack.edgeclaw(["simulate", channel, "--timeout", "45", ...options.group]);
  assert.equal(group.status, 1, group.log);
  assert.match(
    group.stdout,
    /^delivered \(over the companion\); refused by the access policy: groupPolicy allowlist with an empty allowlist blocks every group$/m,
    group.log,
  );
  assert.match(
    group.stdout,
    new RegExp(
      `^ {2}the config key that would change it: ${options.groupKey.replace(/\./g, "\\.")}$`,
      "m",
    ),
    group.log,
  );
  assert.ok(
    Date.now() - started < 30_000,
    `took ${Date.now() - started} ms: waited out the timeout`,
  );
}
