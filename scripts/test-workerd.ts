import { execFileSync, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { createInterface } from "node:readline";
import { deadline, countFromEnv, track } from "./lib/supervised-child.ts";
import { VitestSummary } from "./lib/vitest-summary.ts";

/**
 * `npm run test:workerd`: the workerd suite as independent shards run side by side. Each shard is
 * its own `vitest run --shard=i/n` process with its own global setup (Postgres, fake platforms,
 * fake models on their own loopback ports) and one workerd that runs its files one after another
 * (vitest.config.ts: isolate false, so the runtime and its module cache are started once per shard,
 * not once per file). Shards share nothing, so a file sees only its own shard's traffic; most of a
 * test's time is spent waiting on alarms, debounce and retry timers, so shards overlap well even
 * on two cores.
 *
 * EDGECLAW_TEST_SHARDS sets the count (default: 2, at most the core count + 1). Arguments after
 * `--` go to every shard's vitest (a file filter, `-t`, a reporter).
 *
 * Two bounds, because a vitest run over the workers pool can stop making progress without a word
 * (cloudflare/workers-sdk#15498: mid-run, after a file's output; and workerd crashing at shutdown):
 * - a shard that has printed its summary and is still running a minute later is ended, and its
 *   summary's result stands;
 * - a shard that prints nothing for EDGECLAW_TEST_STALL_TIMEOUT seconds (default 300; a file's
 *   line comes when the file has run, and no test may take over 30 s) is reported with its
 *   processes and ended. When nothing has failed so far, the files no shard reported are run once
 *   more in a fresh vitest, and that run decides; a second stall fails.
 */

const DEFAULT_SHARDS = 2;
/** How long a shard may take to exit after its summary; vitest's own close timeout is 10 s. */
const EXIT_GRACE_MS = 60_000;
const STALL_MS = countFromEnv("EDGECLAW_TEST_STALL_TIMEOUT", 300) * 1000;

function shardCount(): number {
  const raw = process.env.EDGECLAW_TEST_SHARDS;
  if (raw === undefined || raw === "") return Math.min(DEFAULT_SHARDS, availableParallelism() + 1);
  const count = Number(raw);
  if (!Number.isInteger(count) || count < 1) {
    console.error(`EDGECLAW_TEST_SHARDS must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return count;
}

interface VitestRun {
  code: number;
  summary: VitestSummary;
  /** Ended for printing nothing for STALL_MS. */
  stalled: boolean;
}

/** Runs one vitest, its output lines prefixed with `label` so interleaved logs stay readable. */
function runVitest(label: string, args: string[]): Promise<VitestRun> {
  // Its own process group, so a shard that stalls or will not exit is ended with its workerd.
  const child = spawn("npx", ["vitest", "run", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "1" },
    detached: true,
  });
  track(child);
  const prefix = label ? `${label} ` : "";
  const summary = new VitestSummary();
  let ending: "stalled" | "hung at exit" | undefined;
  let disarmExit = () => {};
  const armStall = () =>
    deadline(child, STALL_MS, () => {
      ending = "stalled";
      return `workerd tests: ${label || "vitest"} printed nothing for ${STALL_MS / 1000} s (EDGECLAW_TEST_STALL_TIMEOUT) after ${summary.reportedFiles.size} file(s); ending it.`;
    });
  let disarmStall = armStall();
  for (const [stream, sink] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    createInterface({ input: stream }).on("line", (line) => {
      sink.write(`${prefix}${line}\n`);
      if (ending) return;
      disarmStall();
      disarmStall = armStall();
      summary.read(line);
      if (VitestSummary.closes(line) && summary.finished) {
        disarmStall();
        disarmExit = deadline(child, EXIT_GRACE_MS, () => {
          ending = "hung at exit";
          return `workerd tests: ${label || "vitest"} printed its summary (${summary.failed ? "with failures" : "all passed"}) but has not exited ${EXIT_GRACE_MS / 1000} s later; ending it and keeping its summary's result.`;
        });
      }
    });
  }
  return new Promise((resolve) => {
    const done = (code: number) => {
      disarmStall();
      disarmExit();
      resolve({ code, summary, stalled: ending === "stalled" });
    };
    child.once("error", () => done(127));
    child.once("exit", (code, signal) => {
      if (ending === "hung at exit") done(summary.failed ? 1 : 0);
      else if (ending === "stalled") done(1);
      else done(code ?? (signal ? 128 : 1));
    });
  });
}

/** The test files vitest would run with these arguments (it lists every file; shards are ours). */
function listFiles(extra: string[]): string[] {
  const out = execFileSync("npx", ["vitest", "list", "--filesOnly", ...extra], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return out
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /\.test\.[cm]?[jt]s$/.test(line));
}

/** After a stall with nothing failed: runs the files no shard reported, once, in a fresh vitest. */
async function rerunUnreported(runs: VitestRun[], extra: string[]): Promise<number> {
  if (runs.some((run) => run.summary.failed)) {
    console.error("workerd tests: a shard stalled and another result failed already; no rerun.");
    return 1;
  }
  const reported = new Set(runs.flatMap((run) => [...run.summary.reportedFiles]));
  const remaining = listFiles(extra).filter((file) => !reported.has(file));
  if (remaining.length === 0) {
    console.error("workerd tests: every file had reported (all passed) before the stall.");
    return 0;
  }
  console.error(
    `workerd tests: running the ${remaining.length} file(s) the stalled shard did not report once more:\n  ${remaining.join("\n  ")}`,
  );
  // The files are filters added to the caller's own arguments: with a filter of its own the rerun
  // may repeat some passed files, never skip one.
  const rerun = await runVitest("[rerun]", [...extra, ...remaining]);
  return rerun.code;
}

async function main(): Promise<number> {
  const count = shardCount();
  const extra = process.argv.slice(2);
  const started = performance.now();
  const runs = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      runVitest(
        count > 1 ? `[${i + 1}/${count}]` : "",
        count > 1 ? [`--shard=${i + 1}/${count}`, "--passWithNoTests", ...extra] : extra,
      ),
    ),
  );
  let failed = runs.flatMap((run, i) => (run.code === 0 ? [] : [`${i + 1}/${count}`]));
  let code = runs.find((run) => run.code !== 0)?.code ?? 0;
  if (runs.some((run) => run.stalled)) {
    code = await rerunUnreported(runs, extra);
    failed = code === 0 ? [] : ["the rerun"];
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(
    failed.length
      ? `\nworkerd tests: ${failed.join(", ")} failed (${seconds} s, ${count} shards)`
      : `\nworkerd tests: ${count} shards passed in ${seconds} s`,
  );
  return code;
}

main().then((code) => process.exit(code));
