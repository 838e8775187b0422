import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { SandboxHost } from "../src/sandbox/host.ts";
import { hostAllowed } from "../src/sandbox/egress-proxy.ts";
import type { ExecStatus, StartOp } from "../../functions/sandbox/wire.ts";

/**
 * The companion's sandbox host with real bubblewrap: what a command can and cannot reach, the
 * workspace sync both ways, background commands, and the record that keeps an exec from ever
 * running twice (a new host on the same disk reports a command the old one lost, and starts nothing).
 */
const root = mkdtempSync(join(tmpdir(), "edgeclaw-sandbox-host-"));
const host = new SandboxHost(root, () => undefined);
after(() => host.stopAll());

let n = 0;
function op(command: string, overrides: Partial<StartOp> = {}): StartOp {
  return {
    op: "start",
    scope: "agent:test",
    execId: `call-${++n}`,
    command,
    workdir: "",
    env: {},
    timeoutSeconds: 30,
    waitMs: 10_000,
    allowedHosts: [],
    pty: false,
    network: false,
    isolation: "bwrap",
    maxOutputChars: 200_000,
    pendingMaxOutputChars: 30_000,
    syncBack: true,
    syncMaxFiles: 100,
    syncMaxBytes: 1_000_000,
    resume: false,
    ...overrides,
  };
}
const run = async (command: string, overrides: Partial<StartOp> = {}) =>
  (await host.handle(op(command, overrides))) as ExecStatus;

describe("sandbox host (bubblewrap)", () => {
  it("runs a command in /workspace, syncs files in and reports what it changed", async () => {
    const status = await run("cat in.txt; echo made > out.txt; rm gone.txt; pwd", {
      files: [
        { path: "in.txt", content: "from postgres\n", version: 3 },
        { path: "gone.txt", content: "bye\n", version: 1 },
      ],
    });
    assert.equal(status.state, "exited");
    assert.equal(status.exitCode, 0);
    assert.equal(status.output, "from postgres\n/workspace\n");
    const changes = Object.fromEntries((status.changes ?? []).map((c) => [c.path, c]));
    assert.deepEqual(changes["out.txt"], { path: "out.txt", content: "made\n", baseVersion: 0 });
    assert.deepEqual(changes["gone.txt"], { path: "gone.txt", content: null, baseVersion: 1 });
    assert.equal(changes["in.txt"], undefined, "unchanged files are not sent back");
  });

  it("refuses writes outside /workspace, host secrets, the network and other processes", async () => {
    const secretDir = mkdtempSync(join(tmpdir(), "edgeclaw-host-secret-"));
    writeFileSync(join(secretDir, "token"), "host-secret-value");
    process.env.EDGECLAW_TEST_HOST_SECRET = "env-secret-value";
    const outside = await run(
      `echo x > /usr/evil; echo y > ${secretDir}/evil; echo z > /etc/evil; echo done`,
    );
    assert.match(outside.output, /Read-only file system|No such file or directory/);
    assert.equal(existsSync(join(secretDir, "evil")), false);
    assert.equal(existsSync("/usr/evil"), false);

    const secrets = await run(
      `cat ${secretDir}/token; cat ${root}/*/manifest.json; env; ls ${process.env.HOME ?? "/root"}; echo end`,
    );
    assert.doesNotMatch(secrets.output, /host-secret-value|env-secret-value|in\.txt/);

    const server = createServer((socket) => socket.end("hello from the host\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const network = await run(
      `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>&1 || echo no-loopback; getent hosts example.com || echo no-dns`,
    );
    server.close();
    assert.doesNotMatch(network.output, /hello from the host/);
    assert.match(network.output, /no-dns/);

    const victim = spawn("sleep", ["60"], { stdio: "ignore" });
    const kill = await run(`kill -9 ${victim.pid} 2>&1; echo "kill=$?"; ps -e | wc -l`);
    assert.match(kill.output, /kill=1/);
    assert.equal(victim.exitCode, null, "the host process is still alive");
    assert.equal(victim.signalCode, null);
    victim.kill();
  });

  it("network limited to allowedHosts: only the listed host is reachable, through the egress proxy", async () => {
    // Two loopback fakes: 127.0.0.2 is listed, 127.0.0.3 is not (no internet is involved).
    const fake = (address: string, text: string) =>
      new Promise<{ port: number; close(): void }>((resolve) => {
        const server = createHttpServer((_req, res) => res.end(text));
        server.listen(0, address, () =>
          resolve({
            port: (server.address() as { port: number }).port,
            close: () => server.close(),
          }),
        );
      });
    const allowed = await fake("127.0.0.2", "hello-allowed");
    const other = await fake("127.0.0.3", "hello-other");
    try {
      const status = await run(
        [
          `curl -sS --max-time 10 http://127.0.0.2:${allowed.port}/; echo " plain=$?"`,
          // CONNECT (what HTTPS uses): the tunnel goes to the listed host.
          `curl -sS -p --max-time 10 http://127.0.0.2:${allowed.port}/; echo " tunnel=$?"`,
          `curl -sS --max-time 10 http://127.0.0.3:${other.port}/; echo " other=$?"`,
          `curl -sS -p --max-time 10 http://127.0.0.3:${other.port}/ 2>&1; echo " other-tunnel=$?"`,
          // Around the proxy there is no way out: 127.0.0.2 inside is the sandbox's own loopback.
          `(exec 3<>/dev/tcp/127.0.0.2/${allowed.port} && cat <&3) 2>/dev/null || echo no-direct`,
          "getent hosts example.com || echo no-dns",
        ].join("; "),
        { network: true, allowedHosts: ["127.0.0.2"] },
      );
      assert.equal(status.state, "exited", status.output);
      assert.match(status.output, /^hello-allowed plain=0$/m);
      assert.match(status.output, /^hello-allowed tunnel=0$/m);
      assert.match(status.output, /is not in agents\.defaults\.sandbox\.docker\.allowedHosts/);
      assert.doesNotMatch(status.output, /hello-other/);
      assert.match(status.output, /other-tunnel=56/);
      assert.match(status.output, /^no-direct$/m);
      assert.match(status.output, /^no-dns$/m);
    } finally {
      allowed.close();
      other.close();
    }
  });

  it("allowedHosts patterns: * matches any run of characters, names compare without case", () => {
    assert.equal(hostAllowed("files.pythonhosted.org", ["*.pythonhosted.org"]), true);
    assert.equal(hostAllowed("PyPI.org", ["pypi.org"]), true);
    assert.equal(hostAllowed("pypi.org.evil.test", ["pypi.org"]), false);
    assert.equal(hostAllowed("evilpythonhosted.org", ["*.pythonhosted.org"]), false);
    assert.equal(hostAllowed("github.com", ["*"]), true);
    assert.equal(hostAllowed("api.github.com", ["api.*.com"]), true);
  });

  it("pty: true runs the command on a terminal inside bubblewrap; keys sent are keystrokes (Ctrl-C interrupts)", async () => {
    const tty = await run("tty; test -t 0 && test -t 1 && echo on-a-tty; stty size; echo $TERM", {
      pty: true,
    });
    assert.equal(tty.state, "exited");
    assert.equal(tty.exitCode, 0);
    assert.match(tty.output, /^\/dev\/pts\/\d+\non-a-tty\n40 120\nxterm-256color\n$/);
    const plain = await run("test -t 1 && echo tty || echo no-tty");
    assert.equal(plain.output, "no-tty\n", "without pty: pipes, as before");

    const started = (await host.handle(
      op("printf 'name? '; read name; echo hello-$name; sleep 30; echo never", {
        pty: true,
        waitMs: 500,
      }),
    )) as ExecStatus;
    assert.equal(started.state, "running");
    await host.handle({
      op: "write",
      scope: "agent:test",
      execId: started.execId,
      data: "ada\r",
      eof: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await host.handle({
      op: "write",
      scope: "agent:test",
      execId: started.execId,
      data: "\u0003",
      eof: false,
    });
    const ended = (await host.handle({
      op: "poll",
      scope: "agent:test",
      execId: started.execId,
      waitMs: 5000,
      offset: 0,
    })) as ExecStatus;
    assert.equal(ended.state, "exited");
    assert.equal(ended.exitCode, 130, "interrupted by the terminal's Ctrl-C");
    assert.match(ended.output, /hello-ada\n/);
    assert.doesNotMatch(ended.output, /never|\r/);
  });

  it("a background command keeps running; poll sees its output, kill ends it", async () => {
    const started = await run("echo first; sleep 30; echo never", { waitMs: 300 });
    assert.equal(started.state, "running");
    assert.equal(started.output, "first\n");
    const polled = (await host.handle({
      op: "poll",
      scope: "agent:test",
      execId: started.execId,
      waitMs: 0,
      offset: 0,
    })) as ExecStatus;
    assert.equal(polled.state, "running");
    const killed = (await host.handle({
      op: "kill",
      scope: "agent:test",
      execId: started.execId,
      signal: "SIGKILL",
    })) as ExecStatus;
    assert.equal(killed.state, "exited");
    assert.equal(killed.signal, "SIGKILL");
    assert.doesNotMatch(killed.output, /never/);
  });

  it("never starts a known id again; a new host reports a command the old one lost", async () => {
    const counter = "echo run >> counter.txt; sleep 30";
    const first = await run(counter, { execId: "once-1", waitMs: 300 });
    assert.equal(first.state, "running");
    const again = (await host.handle(op(counter, { execId: "once-1", waitMs: 0 }))) as ExecStatus;
    assert.equal(again.state, "running");
    // The host process dies (die-with-parent would take the command): a new host on the same disk.
    host.stopAll();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reborn = new SandboxHost(root, () => undefined);
    const resumed = (await reborn.handle(op(counter, { execId: "once-1" }))) as ExecStatus;
    assert.equal(resumed.state, "exited", "the old host saw it end before dying here");
    const lostId = "once-2";
    const lostHost = new SandboxHost(root, () => undefined);
    await lostHost.handle(
      op("echo run >> counter2.txt; sleep 30", { execId: lostId, waitMs: 300 }),
    );
    const next = new SandboxHost(root, () => undefined);
    const lost = (await next.handle(
      op("echo run >> counter2.txt", { execId: lostId }),
    )) as ExecStatus;
    assert.equal(lost.state, "lost");
    lostHost.stopAll();
    const unknown = (await next.handle(
      op("echo x", { execId: "never-sent", resume: true }),
    )) as ExecStatus;
    assert.equal(unknown.state, "unknown");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const workspace = (await next.handle(
      op("cat counter.txt counter2.txt", { execId: "count" }),
    )) as ExecStatus;
    assert.equal(workspace.output, "run\nrun\n", "each command ran exactly once");
  });

  it("bounds output and times out", async () => {
    const big = await run("head -c 300000 /dev/zero | tr '\\0' a", {
      maxOutputChars: 5000,
      pendingMaxOutputChars: 1000,
    });
    assert.equal(big.outputChars, 5000);
    assert.equal(big.droppedChars, 295_000);
    assert.equal(big.output.length, 1000);
    const slow = await run("sleep 20", { timeoutSeconds: 1 });
    assert.equal(slow.state, "exited");
    assert.equal(slow.timedOut, true);
  });
});
