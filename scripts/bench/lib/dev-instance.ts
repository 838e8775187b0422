import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../lib/local-ports.ts";

export interface DevInstance {
  url: string;
  /** The root of the instance's process tree (npm when `viaNpm`, else the node running dev.ts). */
  pid: number;
  /** Everything the instance printed so far (stdout and stderr): tests read its log lines. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * A throwaway `npm run dev` (own port, own data dir, own config) for benchmarks: exactly what a
 * user runs, so the figures include the real Worker, Durable Objects and local Postgres.
 */
export async function startDevInstance(
  config: Record<string, unknown>,
  extraEnv: Record<string, string> = {},
  /**
   * viaNpm: start it as a user does (`npm run dev`, with npm and tsx above dev.ts), for whole-tree
   * figures. cwd: another checkout's `npm run dev` (a baseline measured in the same run).
   */
  options: { viaNpm?: boolean; cwd?: string } = {},
): Promise<DevInstance> {
  const dataDir = mkdtempSync(join(tmpdir(), "edgeclaw-bench-"));
  const configFile = join(dataDir, "bench.json5");
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const port = await freePort();
  const [command, args] = options.viaNpm
    ? ["npm", ["run", "--silent", "dev"]]
    : [process.execPath, ["--import", "tsx", "scripts/dev.ts"]];
  const child: ChildProcess = spawn(command, args, {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    // Its own group, so stopping it is a Ctrl-C to exactly that tree (npm, tsx and dev.ts alike).
    detached: options.viaNpm === true,
    env: {
      ...process.env,
      ...extraEnv,
      EDGECLAW_PORT: String(port),
      EDGECLAW_DATA_DIR: join(dataDir, "data"),
      EDGECLAW_CONFIG: configFile,
      WRANGLER_SEND_METRICS: "false",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`dev instance did not become ready:\n${output.slice(-4000)}`)),
      180_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // EDGECLAW_BENCH_LOG=1 shows the instance's own log (wrangler, Worker console) while it runs.
      if (process.env.EDGECLAW_BENCH_LOG === "1") process.stderr.write(chunk);
      const match = /edgeclaw ready on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dev instance exited with ${code}:\n${output.slice(-4000)}`));
    });
  });
  const url = await ready;
  const signal = (name: NodeJS.Signals) => {
    try {
      if (options.viaNpm) process.kill(-child.pid!, name);
      else child.kill(name);
    } catch {
      // already gone
    }
  };
  return {
    url,
    pid: child.pid!,
    output: () => output,
    async stop() {
      // Idempotent: a test may stop it and still have it in its cleanup list.
      if (child.exitCode !== null || child.signalCode !== null)
        return void rmSync(dataDir, { recursive: true, force: true });
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      signal("SIGINT");
      const timeout = setTimeout(() => signal("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timeout);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
