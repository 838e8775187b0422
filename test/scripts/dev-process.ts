import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./helpers.ts";

/**
 * `npm run dev` as the node tests start it (dev.node-test.ts, control-page.node-test.ts): the
 * command line taken from package.json, so a test runs what a user runs, in its own process group
 * (a Ctrl-C reaches wrangler and workerd too), with its output kept and its URL read off the ready
 * line. Every stack started here is killed by `killStartedDevs` should a failing test leave it.
 */
export const READY = /edgeclaw ready on (http:\/\/127\.0\.0\.1:\d+)/;

export interface RunningDev {
  child: ChildProcess;
  output: () => string;
  url: string;
}

/** The command line `npm run dev` runs. (npm adds nothing but a shell; a Ctrl-C makes npm exit by SIGINT whatever dev returns.) */
export function devCommand(): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const [program, ...args] = scripts.dev!.split(/\s+/);
  assert.equal(program, "node", "npm run dev starts node directly");
  return [process.execPath, ...args];
}

const started: ChildProcess[] = [];

/** Starts the stack on `port` with its data in `dataDir` (EDGECLAW_CONFIG empty unless `env` names one); resolves at the ready line. */
export function startDev(
  dataDir: string,
  port: number,
  env: Record<string, string> = {},
  readyTimeoutMs = 120_000,
): Promise<RunningDev> {
  const [program, ...args] = devCommand();
  const child = spawn(program!, args, {
    cwd: projectRoot,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      EDGECLAW_DATA_DIR: dataDir,
      EDGECLAW_PORT: String(port),
      EDGECLAW_CONFIG: "",
      ...env,
    },
  });
  started.push(child);
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ready line after ${readyTimeoutMs / 1000} s:\n${text}`)),
      readyTimeoutMs,
    );
    const check = () => {
      const match = READY.exec(text);
      if (match) {
        clearTimeout(timer);
        // Let the lines printed right after the ready line arrive.
        setTimeout(() => resolve({ child, output: () => text, url: match[1]! }), 300);
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dev exited (${code}) before ready:\n${text}`));
    });
  });
}

/** Ctrl-C: SIGINT to every process in the terminal's group; resolves with dev's exit code. */
export async function ctrlC(dev: RunningDev): Promise<number | null> {
  if (dev.child.exitCode !== null) return dev.child.exitCode;
  const exited = new Promise<number | null>((resolve) =>
    dev.child.once("exit", (code) => resolve(code)),
  );
  tryKill(-dev.child.pid!, "SIGINT");
  return exited;
}

/** Ctrl-C, and SIGKILL to the group should it still run after `graceMs`. */
export async function stopDev(dev: RunningDev, graceMs = 10_000): Promise<void> {
  const timer = setTimeout(() => {
    if (dev.child.exitCode === null) tryKill(-dev.child.pid!, "SIGKILL");
  }, graceMs);
  await ctrlC(dev);
  clearTimeout(timer);
}

/** Another detached process a test starts, for `killStartedDevs` to kill with the stacks. */
export function killAtEnd(child: ChildProcess): void {
  started.push(child);
}

/** For `after()`: SIGKILL to the group of every stack started here (or handed to `killAtEnd`) that still runs. */
export function killStartedDevs(): void {
  for (const child of started)
    if (child.exitCode === null && child.pid) tryKill(-child.pid, "SIGKILL");
}

export function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}
