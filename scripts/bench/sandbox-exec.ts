/**
 * What an `exec` costs over the command's own time, layer by layer, on this machine:
 *   1. baseline: spawning `sh -c true` directly (node child_process), as a shell tool would;
 *   2. the same inside bubblewrap (the companion's isolation: namespaces, mounts);
 *   3. the sandbox host (companion/src/sandbox/host.ts) in-process: record, spawn in bubblewrap,
 *      collect, scan the workspace back;
 *   4. the same over the signed channel (POST /v1/sandbox, HMAC), as the Worker calls it;
 *   5. the whole tool round trip in `npm run dev` (workerd, SessionDO, Postgres workspace sync,
 *      the companion): a chat turn whose demo model calls exec (`run \`true\``) against the same
 *      turn calling `read` (a tool that touches no sandbox) — the difference is exec's part — and
 *      `run \`sleep 1\`` (the command's own second comes back on top, nothing more).
 * Also: the sandbox start (bubblewrap's probe), the companion's memory after the runs, the
 * sandbox image's host process (container-main.ts) start and memory as a plain node process.
 *
 *   npx tsx scripts/bench/sandbox-exec.ts [--runs 20] [--turns 8]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import type { StartOp } from "../../functions/sandbox/wire.ts";
import { bwrapArgs, probeBwrap } from "../../companion/src/sandbox/bwrap.ts";
import { SandboxHost } from "../../companion/src/sandbox/host.ts";
import { startSandboxServer } from "../../companion/src/sandbox/server.ts";
import { startDevInstance } from "./lib/dev-instance.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "20" }, turns: { type: "string", default: "8" } },
});
const runs = Math.max(3, Math.min(200, Number(values.runs)));
const turns = Math.max(3, Math.min(50, Number(values.turns)));

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function timed(count: number, once: (i: number) => Promise<void>): Promise<number> {
  const samples: number[] = [];
  await once(-1); // warm-up, not counted
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await once(i);
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

function rssMib(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

const work = mkdtempSync(join(tmpdir(), "edgeclaw-bench-sandbox-"));
const startOp = (execId: string, command: string): StartOp => ({
  op: "start",
  scope: "agent:bench",
  execId,
  command,
  workdir: "",
  env: {},
  timeoutSeconds: 60,
  waitMs: 30_000,
  network: false,
  allowedHosts: [],
  isolation: "bwrap",
  maxOutputChars: 200_000,
  pendingMaxOutputChars: 30_000,
  files: [{ path: "README.md", content: "bench\n", version: 1 }],
  syncBack: true,
  syncMaxFiles: 500,
  syncMaxBytes: 8 * 1024 * 1024,
  resume: false,
  pty: false,
});

const probe = probeBwrap(true);
if (!probe.ok) {
  console.error(`bubblewrap is not usable here: ${probe.detail}`);
  process.exit(1);
}
const direct = await timed(runs, () => run("/bin/sh", ["-c", "true"]));
const bwrap = await timed(runs, () =>
  run(
    "bwrap",
    bwrapArgs({ workspaceDir: work, workdir: "", env: {}, network: false, command: "true" }),
  ),
);
const host = new SandboxHost(join(work, "host"), () => undefined);
const inProcess = await timed(runs, async (i) => {
  await host.handle(startOp(`in-process-${i}`, "true"));
});
const key = { id: "bench", secret: "bench-outbound-secret-not-for-production" };
const server = await startSandboxServer({ root: join(work, "server"), keys: [key] });
const overHttp = await timed(runs, async (i) => {
  const body = JSON.stringify(startOp(`http-${i}`, "true"));
  const headers = await signRequest(key, {
    method: "POST",
    path: "/v1/sandbox",
    body: new TextEncoder().encode(body),
    timestamp: Math.floor(Date.now() / 1000),
  });
  const response = await fetch(`http://127.0.0.1:${server.port}/v1/sandbox`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body,
  });
  if (response.status !== 200) throw new Error(`sandbox host answered ${response.status}`);
  await response.text();
});
await server.stop();

// The sandbox image's process as a plain node process: time to listening, and its memory.
// Bundled as sandbox/Dockerfile bundles it.
const imageBundle = join(work, "sandbox-host.mjs");
await build({
  entryPoints: [
    fileURLToPath(new URL("../../companion/src/sandbox/container-main.ts", import.meta.url)),
  ],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  outfile: imageBundle,
  logLevel: "warning",
});
const imageStarted = performance.now();
const image = spawn(process.execPath, [imageBundle], {
  env: {
    PATH: process.env.PATH,
    EDGECLAW_SANDBOX_PORT: "0",
    EDGECLAW_SANDBOX_HOST: "127.0.0.1",
    EDGECLAW_SANDBOX_WORKSPACE: join(work, "image-ws"),
    EDGECLAW_SANDBOX_STATE: join(work, "image-state"),
  },
  stdio: ["ignore", "pipe", "inherit"],
});
await new Promise<void>((resolve) => {
  let out = "";
  image.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes("sandbox host listening")) resolve();
  });
});
const imageStartMs = performance.now() - imageStarted;
const imageRss = rssMib(image.pid!);
image.kill("SIGTERM");

// The whole tool round trip through the dev stack (demo model, companion backend).
const token = "bench-sandbox-token-0123456789";
const dev = await startDevInstance(
  { agents: { defaults: { sandbox: { backend: "companion", mode: "all" } } } },
  {
    EDGECLAW_FAKE_MODEL: "1",
    EDGECLAW_GATEWAY_TOKEN: token,
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
  },
);
let user = 0;
const turn = (text: string) => async () => {
  const response = await fetch(`${dev.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "openclaw/default",
      // A session per turn: every turn starts from the same transcript size.
      user: `bench-${user++}`,
      messages: [{ role: "user", content: text }],
    }),
  });
  const answer = await response.text();
  if (response.status !== 200) throw new Error(`chat answered ${response.status}: ${answer}`);
};
let readTurn = 0;
let execTurn = 0;
let sleepTurn = 0;
try {
  readTurn = await timed(turns, turn("read AGENTS.md"));
  execTurn = await timed(turns, turn("run `true`"));
  sleepTurn = await timed(Math.max(3, Math.floor(turns / 2)), turn("run `sleep 1`"));
} finally {
  // Read now: the banner lines follow the ready line the instance resolved on.
  const companionPid = Number(/Companion: .* \(pid (\d+);/.exec(dev.output())?.[1]);
  const companionRss = companionPid > 0 ? rssMib(companionPid) : 0;
  await dev.stop();
  rmSync(work, { recursive: true, force: true });
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  console.log(`\nexec overhead, medians of ${runs} runs (turns: ${turns}) on this machine\n`);
  console.log(`  1. sh -c true, spawned directly (baseline)          ${ms(direct)}`);
  console.log(
    `  2. the same in bubblewrap                           ${ms(bwrap)}  (+${ms(bwrap - direct)} isolation)`,
  );
  console.log(
    `  3. sandbox host in-process (record, spawn, scan)    ${ms(inProcess)}  (+${ms(inProcess - direct)} over 1)`,
  );
  console.log(
    `  4. signed POST /v1/sandbox (the companion's path)   ${ms(overHttp)}  (+${ms(overHttp - direct)} over 1)`,
  );
  console.log(`  5. chat turn calling read (no sandbox)              ${ms(readTurn)}`);
  console.log(
    `     chat turn calling exec \`true\`                   ${ms(execTurn)}  (exec's part: ${ms(execTurn - readTurn)})`,
  );
  console.log(
    `     chat turn calling exec \`sleep 1\`                ${ms(sleepTurn)}  (over \`true\`: ${ms(sleepTurn - execTurn)})`,
  );
  console.log(`\n  sandbox start (bubblewrap probe)                    ${probe.startMs} ms`);
  console.log(
    `  companion RSS after the turns                       ${companionRss.toFixed(0)} MiB`,
  );
  console.log(
    `  image host process: start to listening              ${ms(imageStartMs)} (its bundle, as in the image)`,
  );
  console.log(`  image host process RSS, idle                        ${imageRss.toFixed(0)} MiB`);
}
