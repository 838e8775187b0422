import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The real companion as its own process (node --import tsx src/main.ts), for the tests that kill
 * it with SIGKILL mid-stream and restart it on the same data directory, and its resident memory
 * for the figures those tests print.
 */
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));

export function spawnCompanion(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", main], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The process's resident set size now, in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  return (
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024
  );
}

/** Samples the RSS every 50 ms from now: `stop()` ends it and gives the first reading and the peak. */
export function sampleRss(pid: number): { stop(): { idle: number; peak: number } } {
  const idle = rssMiB(pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 50);
  return {
    stop() {
      clearInterval(sampler);
      return { idle, peak };
    },
  };
}
