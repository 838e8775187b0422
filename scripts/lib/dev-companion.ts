import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import type { Socket } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { DevCompanionPlan } from "./dev-companion-plan.ts";
import { freePort, isPortFree } from "./local-ports.ts";

/**
 * The companion as a plain Node process under `npm run dev`: its bundle (companion/dist/main.js,
 * rebuilt when a source is newer: plain node keeps no TypeScript loader or esbuild service
 * resident), started once the Worker answers, stopped before it.
 *
 * Same discipline as wrangler in dev.ts: its own process group (Ctrl-C reaches dev, which stops it
 * in order: connectors, outbox drain, lease release, while the Worker still answers) and
 * die-with-parent.mjs (a killed dev takes it down). A companion that exits on its own is not
 * restarted: dev says so loudly and keeps the Worker serving. The companion already restarts its
 * connectors with backoff inside; a process exit is a bug or a kill that should be seen, and a
 * restarted instance would have to wait out the old lease anyway.
 */

const companionDir = fileURLToPath(new URL("../../companion/", import.meta.url));
const bundle = join(companionDir, "dist", "main.js");
const metafile = join(companionDir, "dist", "meta.json");
const dieWithParentUrl = new URL("./die-with-parent.mjs", import.meta.url).href;
/** The companion's own drain bound (EDGECLAW_COMPANION_DRAIN_MS default) plus room for the lease release. */
const STOP_GRACE_MS = 15_000;

/** True when the bundle is missing or any file it was built from (per esbuild's metafile) is newer. */
export function companionBundleStale(): boolean {
  if (!existsSync(bundle) || !existsSync(metafile)) return true;
  const builtAt = statSync(bundle).mtimeMs;
  let inputs: string[];
  try {
    inputs = Object.keys(
      (JSON.parse(readFileSync(metafile, "utf8")) as { inputs: Record<string, unknown> }).inputs,
    );
  } catch {
    return true;
  }
  // The lock is the workspace root's (companion/ is an npm workspace).
  for (const input of [...inputs, "package.json", "../package-lock.json"]) {
    const path = resolve(companionDir, input);
    if (!existsSync(path) || statSync(path).mtimeMs > builtAt) return true;
  }
  return false;
}

/** Builds the bundle in a short-lived child (`npm run build --prefix companion`); rejects with its output on failure. */
export function buildCompanionBundle(): Promise<void> {
  return new Promise((resolveBuild, reject) => {
    const child = spawn(
      "npm",
      [
        "run",
        "--silent",
        "build",
        "--prefix",
        companionDir,
        "--",
        "--metafile=dist/meta.json",
        "--log-level=warning",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0
        ? resolveBuild()
        : reject(new Error(`building the companion failed (exit ${code}):\n${output.trim()}`)),
    );
  });
}

export interface RunningCompanion {
  pid: number;
  url: string;
  /** Resolves once it answers GET /healthz (true), or false if it exited or did not within `ms`. */
  listening(ms: number): Promise<boolean>;
  /** Graceful: SIGTERM, then SIGKILL to its group after the grace. */
  stop(): Promise<void>;
  /** At once (a second Ctrl-C, or dev itself dying). */
  kill(): void;
}

export interface StartCompanionOptions {
  plan: DevCompanionPlan;
  workerUrl: string;
  host: string;
  port: number;
  dataDir: string;
  /** Called when it exits without being asked to (code, or the signal that ended it). */
  onUnexpectedExit(how: string): void;
}

export function startCompanion(options: StartCompanionOptions): RunningCompanion {
  const env: NodeJS.ProcessEnv = {
    ...options.plan.env,
    EDGECLAW_WORKER_URL: options.workerUrl,
    EDGECLAW_COMPANION_HOST: options.host,
    EDGECLAW_COMPANION_PORT: String(options.port),
    EDGECLAW_COMPANION_DATA_DIR: options.dataDir,
    // One dev stack, one Worker of its own: a stable id lets the next `npm run dev` on this data dir
    // take its lease back at once instead of waiting out the previous run's.
    EDGECLAW_COMPANION_INSTANCE_ID:
      options.plan.env.EDGECLAW_COMPANION_INSTANCE_ID ?? "npm-run-dev",
    EDGECLAW_PARENT_PIPE_FD: "3",
  };
  const child: ChildProcess = spawn(process.execPath, ["--import", dieWithParentUrl, bundle], {
    detached: true,
    // Its JSON log lines go straight to dev's terminal (no pipe through dev's busy event loop).
    stdio: ["ignore", "inherit", "inherit", "pipe"],
    env,
  });
  (child.stdio[3] as Socket | null)?.unref();
  let asked = false;
  const exited = new Promise<void>((resolveExit) =>
    child.once("exit", (code, signal) => {
      if (!asked) options.onUnexpectedExit(signal ? `signal ${signal}` : `code ${code}`);
      resolveExit();
    }),
  );
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  const url = `http://${options.host}:${options.port}`;
  return {
    pid: child.pid!,
    url,
    async listening(ms) {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
        try {
          const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
          await response.body?.cancel();
          if (response.ok) return true;
        } catch {
          // Not listening yet.
        }
        await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      }
      return false;
    },
    async stop() {
      asked = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      signalGroup("SIGTERM");
      const timer = setTimeout(() => signalGroup("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
    kill() {
      asked = true;
      // Not once it is gone: its group id may belong to another process by now.
      if (child.exitCode === null && child.signalCode === null) signalGroup("SIGKILL");
    },
  };
}

/** How many ports dev tries for a companion on a port it chose itself. */
const PORT_ATTEMPTS = 3;

/**
 * Starts the companion and waits until it answers GET /healthz (dev's ready line promises a
 * companion that answers: the first exec may follow it at once). A port dev chose (`port`
 * undefined) was free when `freePort` found it, but the companion binds it only moments later,
 * and another process can take it in between: under the test suites, one of their servers did,
 * and the companion exited with EADDRINUSE. A companion on such a port that exits before it ever
 * answered, while the port is held by someone else, is started again on another free port, up to
 * PORT_ATTEMPTS times. Any other exit (the port free again: the companion failed on its own) is
 * reported at once, as is the last attempt's. A port you asked for (EDGECLAW_COMPANION_PORT,
 * companion.url) is tried once.
 */
export async function startAnsweringCompanion(
  options: Omit<StartCompanionOptions, "port"> & {
    port: number | undefined;
    listenMs: number;
    /** Finds a free port (tests hand one that is taken first). */
    freePort?: () => Promise<number>;
  },
): Promise<{ running: RunningCompanion; answered: boolean }> {
  const findPort = options.freePort ?? (() => freePort(options.host));
  for (let attempt = 1; ; attempt++) {
    const canRetry = options.port === undefined && attempt < PORT_ATTEMPTS;
    const port = options.port ?? (await findPort());
    let answered = false;
    let exitUnanswered: string | undefined;
    const running = startCompanion({
      ...options,
      port,
      onUnexpectedExit(how) {
        if (!answered && canRetry) exitUnanswered = how;
        else options.onUnexpectedExit(how);
      },
    });
    answered = await running.listening(options.listenMs);
    // listening() returns false at once when the child exits; its exit event has fired by then.
    if (exitUnanswered === undefined) return { running, answered };
    if (await isPortFree(port, options.host)) {
      options.onUnexpectedExit(exitUnanswered);
      return { running, answered };
    }
    console.warn(
      `edgeclaw dev: port ${port} was taken before the companion bound it; starting it on another port (attempt ${attempt + 1} of ${PORT_ATTEMPTS})`,
    );
  }
}
