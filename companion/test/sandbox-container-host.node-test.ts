import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { ExecStatus } from "../../functions/sandbox/wire.ts";

/**
 * The sandbox image's process (companion/src/sandbox/container-main.ts, what sandbox/Dockerfile
 * runs), started directly as a node process with the image's paths moved to a temp dir: what the
 * sandbox Durable Object talks to inside a Cloudflare Container. The image itself is not built here
 * (no Docker engine).
 */
const main = fileURLToPath(new URL("../src/sandbox/container-main.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "edgeclaw-sandbox-image-"));
const workspace = join(dir, "workspace");
let child: ChildProcess;
let base = "";

function start(env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const process_ = spawn(process.execPath, ["--import", "tsx", main], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      EDGECLAW_SANDBOX_PORT: "0",
      EDGECLAW_SANDBOX_HOST: "127.0.0.1",
      EDGECLAW_SANDBOX_WORKSPACE: workspace,
      EDGECLAW_SANDBOX_STATE: join(dir, "state"),
      // A variable of the host process: a command must never see it.
      HOST_ONLY_SECRET: "s3cr3t",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    process_.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const port = /"sandbox host listening","port":(\d+)/.exec(out)?.[1];
      if (port) resolve({ child: process_, url: `http://127.0.0.1:${port}` });
    });
    process_.once("exit", (code) => reject(new Error(`host exited (${code}): ${out}`)));
  });
}

let n = 0;
async function call(
  body: Record<string, unknown>,
): Promise<{ status: number; body: Partial<ExecStatus> & Record<string, unknown> }> {
  const response = await fetch(`${base}/v1/sandbox`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Partial<ExecStatus> };
}

function startOp(command: string, overrides: Record<string, unknown> = {}) {
  return {
    op: "start",
    scope: "session:agent:x:webchat:y",
    execId: `exec-${++n}`,
    command,
    timeoutSeconds: 30,
    waitMs: 5000,
    isolation: "none",
    maxOutputChars: 10_000,
    pendingMaxOutputChars: 10_000,
    syncBack: true,
    syncMaxFiles: 100,
    syncMaxBytes: 1_000_000,
    ...overrides,
  };
}

describe("the sandbox image's host process", () => {
  before(async () => {
    ({ child, url: base } = await start());
  });
  after(() => child.kill("SIGKILL"));

  it("serves the protocol unsigned, runs in the fixed workspace, and hands a command none of its own env", async () => {
    const answer = await call(
      startOp('pwd; echo "[${HOST_ONLY_SECRET:-unset}]"; echo "$HOME"; echo hi > made.txt', {
        files: [{ path: "seed.txt", content: "seeded\n", version: 3 }],
      }),
    );
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.state, "exited");
    assert.equal(answer.body.output, `${workspace}\n[unset]\n${workspace}\n`);
    assert.equal(readFileSync(join(workspace, "seed.txt"), "utf8"), "seeded\n");
    assert.deepEqual(answer.body.changes, [{ path: "made.txt", content: "hi\n", baseVersion: 0 }]);
  });

  it("never starts a known id again, and takes allowedHosts (the container enforces them, not bubblewrap)", async () => {
    const op = startOp("echo once >> counter.txt", { network: true, allowedHosts: ["pypi.org"] });
    assert.equal((await call(op)).body.state, "exited");
    assert.equal((await call(op)).body.state, "exited");
    assert.equal(readFileSync(join(workspace, "counter.txt"), "utf8"), "once\n");
  });

  it("pty: true gives the command a terminal without bubblewrap too (the container's path)", async () => {
    const answer = await call(startOp("test -t 1 && echo on-a-tty; stty size", { pty: true }));
    assert.equal(answer.body.state, "exited");
    assert.equal(answer.body.output, "on-a-tty\n40 120\n");
  });

  it("on SIGTERM (the container stopping) its commands go with it and it exits cleanly", async () => {
    const own = await start({ EDGECLAW_SANDBOX_WORKSPACE: join(dir, "ws2") });
    const saved = base;
    base = own.url;
    try {
      const answer = await call(startOp("echo $$ > pid; sleep 60", { waitMs: 300 }));
      assert.equal(answer.body.state, "running");
      const pid = Number(readFileSync(join(dir, "ws2", "pid"), "utf8"));
      const exited = new Promise<number | null>((resolve) => own.child.once("exit", resolve));
      own.child.kill("SIGTERM");
      assert.equal(await exited, 0);
      // Gone (or a zombie until its new parent reaps it: it runs no more either way).
      const alive = () => {
        const stat = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" });
        return stat.status === 0 && !stat.stdout.trim().startsWith("Z");
      };
      for (let i = 0; i < 40 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(alive(), false, "the command is gone");
    } finally {
      base = saved;
    }
    assert.ok(existsSync(join(dir, "ws2")));
  });
});
