import { readFileSync, readdirSync } from "node:fs";

/**
 * Resident memory and CPU time of a whole process tree, read from Linux's /proc (no extra
 * dependency; the benchmarks run on Linux). A process is part of the tree when its parent chain
 * reaches the root pid, so children that moved to a process group of their own (wrangler, workerd)
 * are still counted.
 */
export interface ProcessSample {
  pid: number;
  /** What the process is, from its command line: "workerd", "esbuild", "wrangler", … */
  role: string;
  /** Resident set size, bytes (what `ps`/`top` show; shared pages count in every process). */
  rssBytes: number;
  /** Proportional set size, bytes: shared pages split between their users, so sums are honest. */
  pssBytes: number;
  /** utime + stime, in clock ticks (1/100 s on Linux). */
  cpuTicks: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

export function sampleTree(rootPid: number): ProcessSample[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) parents.set(Number(entry), stat.ppid);
  }
  const inTree = (pid: number): boolean => {
    for (
      let current: number | undefined = pid, hops = 0;
      current !== undefined && hops < 64;
      hops++
    ) {
      if (current === rootPid) return true;
      current = parents.get(current);
      if (current === 0 || current === 1) return false;
    }
    return false;
  };
  const samples: ProcessSample[] = [];
  for (const pid of parents.keys()) {
    if (!inTree(pid)) continue;
    const stat = readStat(pid);
    if (!stat) continue;
    samples.push({
      pid,
      role: roleOf(pid),
      rssBytes: readRss(pid),
      pssBytes: readPss(pid),
      cpuTicks: stat.utime + stat.stime,
    });
  }
  return samples.sort((a, b) => a.pid - b.pid);
}

export function cpuSeconds(ticks: number): number {
  return ticks / CLOCK_TICKS_PER_SECOND;
}

function readStat(pid: number): { ppid: number; utime: number; stime: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]) };
  } catch {
    return undefined; // exited meanwhile
  }
}

function readRss(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function readPss(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function roleOf(pid: number): string {
  let args: string[];
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return "?";
  }
  const line = args.join(" ");
  if (/workerd/.test(args[0] ?? "")) return "workerd";
  // tsx's transform service (TypeScript for the scripts) vs wrangler's bundler.
  if (/esbuild/.test(args[0] ?? ""))
    return /\/tsx\//.test(args[0] ?? "") ? "esbuild (tsx)" : "esbuild";
  if (/wrangler-dist\/cli\.js/.test(line)) return "wrangler";
  if (/wrangler\/bin\/wrangler\.js/.test(line)) return "wrangler (launcher)";
  if (/scripts\/dev\.ts/.test(line) && !/tsx\/dist\/cli/.test(line)) return "dev.ts (hosts PGlite)";
  if (/scripts\/lib\/local-worker\.mjs/.test(line)) return "local-worker.mjs";
  if (/tsx\/dist\/cli/.test(line) || /\/\.bin\/tsx/.test(line)) return "tsx (launcher)";
  if (/npm-cli\.js|\bnpm\b/.test(line)) return "npm";
  return (args[0] ?? "?").split("/").pop() ?? "?";
}

export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}
