import { type ChildProcess, execFileSync } from "node:child_process";

/**
 * Keeps a test run's child processes bounded. Each child is spawned in its own process group
 * (`detached: true`), so the whole tree under it (npm → tsx → vitest → workerd, or node --test and
 * the dev stacks it starts in that group) can be listed and ended together. A child that outlives
 * its budget is reported with what is still running in its group, then ended: CI then fails with
 * a name and a process list within minutes instead of being cut off silently at its hard limit.
 */

const KILL_GRACE_MS = 5_000;

/** Children still running, so Ctrl-C or a SIGTERM to npm test ends their groups too. */
const running = new Set<ChildProcess>();
let signalsHooked = false;

function hookSignals(): void {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      for (const child of running) endGroup(child, "SIGKILL");
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
  }
}

/** Registers a child spawned with `detached: true`; it leaves the set when it exits. */
export function track(child: ChildProcess): void {
  hookSignals();
  running.add(child);
  child.once("exit", () => running.delete(child));
}

/** Sends `signal` to the child's whole process group. */
export function endGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** The live processes of `child`'s group as `ps` shows them (elapsed seconds, CPU, memory, command). */
export function groupListing(child: ChildProcess): string {
  if (child.pid === undefined) return "  (never started)";
  try {
    const table = execFileSync("ps", ["-eo", "pgid=,stat=,pid=,etimes=,pcpu=,rss=,args="], {
      encoding: "utf8",
    });
    // Zombies are left out: they run nothing, and an orphan's wait for a reaper is not a hang.
    const rows = table
      .split("\n")
      .map((line) => line.trim().split(/\s+/))
      .filter(([pgid, stat]) => pgid === String(child.pid) && !stat?.startsWith("Z"))
      .map((fields) => `  ${fields.slice(2).join(" ").slice(0, 200)}`);
    return rows.length
      ? `  pid elapsed-s cpu% rss-KiB command\n${rows.join("\n")}`
      : "  (no process left in its group)";
  } catch (error) {
    return `  (ps failed: ${String(error)})`;
  }
}

/**
 * Ends `child`'s group after `ms`, first printing `why` and the group's processes: SIGTERM, then
 * SIGKILL after a grace period. Returns a function that disarms it (call it when the child exits).
 */
export function deadline(child: ChildProcess, ms: number, why: () => string): () => void {
  const timer = setTimeout(() => {
    console.error(`\n${why()}\nStill running in its process group:\n${groupListing(child)}\n`);
    endGroup(child, "SIGTERM");
    setTimeout(() => endGroup(child, "SIGKILL"), KILL_GRACE_MS).unref();
  }, ms);
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * A whole number ≥ 1 from the environment (seconds, lanes, shards), or `fallback`; anything else
 * is refused by name.
 */
export function countFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1) {
    console.error(`${name} must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return count;
}
