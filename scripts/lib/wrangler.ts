import { spawn, type SpawnOptions } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BundledWorkspace } from "../../functions/config/bundled-workspace.ts";

/** wrangler's own entry, run with this Node directly (no npx, so no extra process in between). */
export const wranglerCli = join(
  dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
  "bin",
  "wrangler.js",
);

/**
 * What `npm run dev` runs as its Worker: the bundle wrangler builds, served by workerd directly
 * (scripts/lib/local-worker.mjs), instead of `wrangler dev` and its resident proxy and watcher.
 */
export const localWorkerCli = fileURLToPath(new URL("./local-worker.mjs", import.meta.url));

/** The environment every wrangler child gets: no telemetry (offline it would only wait and fail). */
export function wranglerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, WRANGLER_SEND_METRICS: "false", ...extra };
}

/**
 * Linux caps one command-line argument at 128 KiB (MAX_ARG_STRLEN); a define bigger than that
 * cannot be passed at all, so say so plainly instead of letting spawn fail with E2BIG.
 */
const MAX_DEFINE_ARG_BYTES = 128 * 1024 - 1;

export class DefineTooLargeError extends Error {
  constructor(name: string, bytes: number) {
    super(
      `${name} is ${Math.ceil(bytes / 1024)} KiB, over the ${MAX_DEFINE_ARG_BYTES >> 10} KiB a command-line define can carry` +
        (name === "EDGECLAW_BUNDLED_WORKSPACE"
          ? ": keep the workspace seed folders small (notes, not archives) and write the rest through the agent"
          : ""),
    );
    this.name = "DefineTooLargeError";
  }
}

/** `--define` pairs that bundle the config (as written) and the workspace seeds into the Worker. */
export function bundleDefineArgs(
  rawConfig: Record<string, unknown>,
  seeds: BundledWorkspace,
): string[] {
  return [
    defineArg("EDGECLAW_BUNDLED_CONFIG", rawConfig),
    defineArg("EDGECLAW_BUNDLED_WORKSPACE", seeds),
  ].flatMap((arg) => ["--define", arg]);
}

function defineArg(name: string, value: unknown): string {
  // esbuild takes a JSON literal as a define value; escaping U+2028/9 keeps it a valid JS expression too.
  const json = JSON.stringify(value)
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  const arg = `${name}:${json}`;
  const bytes = Buffer.byteLength(arg);
  if (bytes > MAX_DEFINE_ARG_BYTES) throw new DefineTooLargeError(name, bytes);
  return arg;
}

export interface WranglerRun {
  code: number;
  output: string;
}

/** Runs wrangler to completion, capturing its output (and echoing it live when `echo` is set). */
export function runWrangler(
  args: string[],
  options: { echo?: boolean; env?: Record<string, string>; cwd?: string } = {},
): Promise<WranglerRun> {
  const spawnOptions: SpawnOptions = {
    cwd: options.cwd,
    env: wranglerEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [wranglerCli, ...args], spawnOptions);
    let output = "";
    const take = (target: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk.toString();
      if (options.echo) target.write(chunk);
    };
    child.stdout?.on("data", take(process.stdout));
    child.stderr?.on("data", take(process.stderr));
    child.on("error", reject);
    child.on("close", (code, signal) =>
      resolvePromise({ code: code ?? (signal ? 128 : 1), output }),
    );
  });
}

/** The "Total Upload: … / gzip: …" line wrangler prints for a bundle, without its decoration. */
export function uploadSizeLine(output: string): string | undefined {
  const match = /Total Upload:[^\n]*/.exec(stripAnsi(output));
  return match?.[0].trim();
}

export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "");
}
