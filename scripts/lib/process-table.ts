import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { sep } from "node:path";

/**
 * What the dev stack needs to know about other processes: whether a recorded pid is still the same
 * process (not a zombie, not a reused pid), and which processes still hold a data dir. Linux answers
 * from /proc; elsewhere `ps` answers (start time as text, and command lines only).
 */
export interface ProcessInfo {
  pid: number;
  pgid: number;
  /** Opaque, stable for the life of the process: /proc starttime ticks, or `ps` lstart text. */
  startTime: string;
  zombie: boolean;
}

export interface DataDirHolder {
  pid: number;
  pgid: number;
  command: string;
}

const hasProc = existsSync("/proc/self/stat");

export function processInfo(pid: number): ProcessInfo | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return hasProc ? procInfo(pid) : psInfo(pid);
}

/** True when `pid` runs, is not a zombie and (when known) started at `startTime`: not a reused pid. */
export function isSameLiveProcess(pid: number, startTime: string | undefined): boolean {
  const info = processInfo(pid);
  if (!info || info.zombie) return false;
  return startTime === undefined || info.startTime === startTime;
}

function procInfo(pid: number): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses; every field after it is plain.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    pgid: Number(fields[2]),
    startTime: fields[19] ?? "",
    zombie: fields[0] === "Z" || fields[0] === "X",
  };
}

function psInfo(pid: number): ProcessInfo | undefined {
  try {
    const line = execFileSync("ps", ["-o", "pgid=,stat=,lstart=", "-p", String(pid)], {
      encoding: "utf8",
    }).trim();
    const match = /^(\d+)\s+(\S+)\s+(.+)$/.exec(line);
    if (!match) return undefined;
    return { pid, pgid: Number(match[1]), startTime: match[3]!, zombie: match[2]!.startsWith("Z") };
  } catch {
    return undefined;
  }
}

/**
 * Live processes other than this one that use `dir`: named in their command line (wrangler's
 * --persist-to), members of one of `groups` (the process group an earlier run recorded), or, on
 * Linux, holding a file under it open (workerd's SQLite files). Other users' processes are not
 * readable and are skipped.
 */
export function processesHoldingDir(dir: string, groups: number[] = []): DataDirHolder[] {
  const inside = (path: string) => path === dir || path.startsWith(dir + sep);
  const holders: DataDirHolder[] = [];
  for (const { pid, args } of listProcesses()) {
    if (pid === process.pid) continue;
    const info = processInfo(pid);
    if (!info || info.zombie) continue;
    const uses =
      groups.includes(info.pgid) ||
      args.some((arg) => arg.includes(dir)) ||
      (hasProc && opensUnder(pid, inside));
    if (uses) holders.push({ pid, pgid: info.pgid, command: args.join(" ").slice(0, 120) });
  }
  return holders;
}

function listProcesses(): Array<{ pid: number; args: string[] }> {
  if (hasProc) {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map((name) => {
        try {
          return {
            pid: Number(name),
            args: readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean),
          };
        } catch {
          return { pid: Number(name), args: [] };
        }
      });
  }
  return execFileSync("ps", ["-axo", "pid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), args: match[2]!.split(" ") }));
}

function opensUnder(pid: number, inside: (path: string) => boolean): boolean {
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (inside(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
      } catch {
        // Closed while we looked.
      }
    }
  } catch {
    // Not ours to read, or gone.
  }
  return false;
}
