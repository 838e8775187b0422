import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { listenOnLoopback } from "../../scripts/simulate/fakes/listen.ts";
import { readBody } from "../../scripts/simulate/fakes/read-body.ts";

/**
 * A loopback container engine for the workerd tests, behind the stand-in `ctx.container`
 * (durable-objects/sandbox/loopback-container.ts). Each "container" is the sandbox image's host
 * process (companion/src/sandbox/container-main.ts, bundled once as the Dockerfile bundles it) run
 * as a plain node process inside its own pid namespace (bubblewrap --unshare-pid, the machine's
 * whole filesystem visible otherwise): when the host process dies, every command it started dies
 * with it, as in a container, and its disk (a temp dir) is thrown away. It gets only the env the
 * start names, never the test process's.
 *
 * What it does not imitate: the VM boundary and egress (commands can reach what the test machine
 * can; the start's enableInternet is recorded, not enforced), and image contents (the machine's
 * /usr is what commands see).
 *
 *   POST /containers/:id/start {env, enableInternet}   returns at once, as the runtime's start does
 *   POST /containers/:id/signal {signo}                 → {exitCode} once it exited
 *   ANY  /containers/:id/port/:port/…                   proxied to the host process
 *   POST /containers/:id/intercepted {probeStatus}      the egress the library installed, probed
 *   GET  /_control/containers/:id                       what it was asked, and its state
 *   POST /_control/containers/:id/crash                 SIGKILL: the container dies under its object
 */

interface FakeContainer {
  child: ChildProcess | undefined;
  port: number | undefined;
  dir: string | undefined;
  exitCode: number | null;
  exited: Promise<number>;
  log: {
    starts: Array<{ at: number; env: Record<string, string>; enableInternet: boolean }>;
    intercepted: Array<{ probeStatus: number | string }>;
    exits: number[];
  };
}

const repo = fileURLToPath(new URL("../../", import.meta.url));

export async function startFakeContainerEngine(): Promise<{ url: string; stop(): Promise<void> }> {
  const bundleDir = mkdtempSync(join(tmpdir(), "edgeclaw-sandbox-image-"));
  const bundle = join(bundleDir, "sandbox-host.mjs");
  await build({
    entryPoints: [join(repo, "companion/src/sandbox/container-main.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: bundle,
    logLevel: "warning",
  });
  const pidNamespace =
    spawnSync("bwrap", ["--dev-bind", "/", "/", "--unshare-pid", "true"]).status === 0;
  const containers = new Map<string, FakeContainer>();
  const get = (id: string): FakeContainer => {
    let container = containers.get(id);
    if (!container) {
      container = {
        child: undefined,
        port: undefined,
        dir: undefined,
        exitCode: null,
        exited: Promise.resolve(0),
        log: { starts: [], intercepted: [], exits: [] },
      };
      containers.set(id, container);
    }
    return container;
  };

  function launch(container: FakeContainer, env: Record<string, string>): void {
    const dir = mkdtempSync(join(tmpdir(), "edgeclaw-fake-container-"));
    const hostEnv = {
      PATH: "/usr/local/bin:/usr/bin:/bin",
      ...env,
      EDGECLAW_SANDBOX_PORT: "0",
      EDGECLAW_SANDBOX_HOST: "127.0.0.1",
      EDGECLAW_SANDBOX_WORKSPACE: join(dir, "workspace"),
      EDGECLAW_SANDBOX_STATE: join(dir, "state"),
    };
    const command = [process.execPath, bundle];
    const child = pidNamespace
      ? spawn(
          "bwrap",
          ["--dev-bind", "/", "/", "--unshare-pid", "--die-with-parent", "--", ...command],
          {
            env: hostEnv,
            stdio: ["ignore", "pipe", "inherit"],
          },
        )
      : spawn(command[0]!, command.slice(1), {
          env: hostEnv,
          stdio: ["ignore", "pipe", "inherit"],
        });
    container.child = child;
    container.dir = dir;
    container.port = undefined;
    container.exitCode = null;
    let buffered = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const match = /"message":"sandbox host listening","port":(\d+)/.exec(buffered);
      if (match && container.port === undefined) container.port = Number(match[1]);
      if (buffered.length > 100_000) buffered = buffered.slice(-10_000);
    });
    container.exited = new Promise<number>((resolve) =>
      child.once("exit", (code, signal) => {
        const exitCode = code ?? (signal === "SIGKILL" ? 137 : signal === "SIGTERM" ? 143 : 1);
        container.exitCode = exitCode;
        container.child = undefined;
        container.port = undefined;
        container.log.exits.push(exitCode);
        // A container's disk does not outlive it.
        rmSync(dir, { recursive: true, force: true });
        resolve(exitCode);
      }),
    );
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://engine");
      const control = /^\/_control\/containers\/([^/]+)(\/crash)?$/.exec(url.pathname);
      if (control) {
        const container = get(decodeURIComponent(control[1]!));
        if (control[2] && container.child) {
          container.child.kill("SIGKILL");
          await container.exited;
        }
        return json(res, 200, {
          running: container.child !== undefined,
          exitCode: container.exitCode,
          ...container.log,
        });
      }
      const match = /^\/containers\/([^/]+)\/([a-z]+)(?:\/(\d+))?(\/.*)?$/.exec(url.pathname);
      if (!match) return json(res, 404, { error: "not found" });
      const container = get(decodeURIComponent(match[1]!));
      const action = match[2];
      if (action === "port") return proxy(container, req, res, `${match[4] ?? "/"}${url.search}`);
      const body = JSON.parse((await readBody(req)) || "{}") as Record<string, unknown>;
      if (action === "start") {
        container.log.starts.push({
          at: Date.now(),
          env: (body.env as Record<string, string>) ?? {},
          enableInternet: body.enableInternet === true,
        });
        if (!container.child) launch(container, (body.env as Record<string, string>) ?? {});
        return json(res, 200, { ok: true });
      }
      if (action === "signal") {
        const child = container.child;
        if (!child) return json(res, 200, { exitCode: container.exitCode ?? 0 });
        const signo = Number(body.signo);
        // bwrap forwards nothing: signal the host process inside (its parent, bwrap's init, then ends the namespace).
        signalHost(child, signo);
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        const exitCode = await container.exited;
        clearTimeout(timer);
        return json(res, 200, { exitCode });
      }
      if (action === "intercepted") {
        container.log.intercepted.push({ probeStatus: body.probeStatus as number | string });
        return json(res, 200, { ok: true });
      }
      return json(res, 404, { error: `no action ${action}` });
    })().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) });
    });
  });

  function proxy(
    container: FakeContainer,
    req: IncomingMessage,
    res: import("node:http").ServerResponse,
    path: string,
  ) {
    if (!container.child || container.port === undefined) {
      const headers: Record<string, string> = { "x-container-not-listening": "1" };
      if (!container.child && container.exitCode !== null)
        headers["x-container-stopped"] = String(container.exitCode);
      res.writeHead(503, headers);
      return res.end();
    }
    const upstream = httpRequest(
      { host: "127.0.0.1", port: container.port, method: req.method, path, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      // The host died mid-request: the connection is lost, as the runtime reports it.
      const headers: Record<string, string> = { "x-container-not-listening": "1" };
      if (container.exitCode !== null) headers["x-container-stopped"] = String(container.exitCode);
      if (!res.headersSent) res.writeHead(503, headers);
      res.end();
    });
    req.pipe(upstream);
  }

  const listening = await listenOnLoopback(server);
  return {
    url: listening.url,
    async stop() {
      for (const container of containers.values()) container.child?.kill("SIGKILL");
      await Promise.all([...containers.values()].map((container) => container.exited));
      await listening.stop();
      rmSync(bundleDir, { recursive: true, force: true });
    },
  };
}

/** The host process is bwrap's grandchild (bwrap → its pid-1 → node): find it by parent pid. */
function signalHost(child: ChildProcess, signo: number): void {
  const signal = signo === 9 ? "SIGKILL" : signo === 2 ? "SIGINT" : "SIGTERM";
  if (signal === "SIGKILL" || child.spawnargs[0] !== "bwrap") {
    child.kill(signal);
    return;
  }
  const descendants = (pid: number): number[] => {
    const out = spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" }).stdout;
    return out.split("\n").filter(Boolean).map(Number);
  };
  const hosts = descendants(child.pid!).flatMap(descendants);
  if (!hosts.length) child.kill(signal);
  for (const pid of hosts) process.kill(pid, signal);
}

function json(res: import("node:http").ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
