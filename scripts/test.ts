import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deadline, countFromEnv, track } from "./lib/supervised-child.ts";

/**
 * `npm test`: the project's checks as named stages of npm scripts, run in order and timed, so CI
 * time is visible per stage and a regression points at its stage. The first failing stage stops
 * the run (the later ones would only repeat its noise). A table of wall-clock seconds is printed at
 * the end, and appended to the file named by EDGECLAW_STAGE_TIMES when set (.ci/run prints its
 * install stage and these in one table).
 *
 * `npm test -- <script> …` runs only the named scripts, each in its stage.
 *
 * Every script is bounded: one still running after EDGECLAW_TEST_SCRIPT_TIMEOUT seconds (default
 * 2400) is reported with the processes left in its group and ended, and the stage fails. While a
 * stage's scripts run side by side, a line every five minutes says which are still running, so a
 * hang is named in the log's tail.
 */
const STAGES: Stage[] = [
  { name: "lint", scripts: ["lint"] },
  { name: "typecheck", scripts: ["typecheck"] },
  // The companion bundle too: the dev stacks the script and companion tests start side by side
  // then find it fresh instead of both rebuilding companion/dist at once.
  { name: "build", scripts: ["build", "build:companion"] },
  // All three side by side: the workerd shards spend most of their time waiting on timers (about
  // 0.4 CPU-seconds a second for two shards) and the script and companion tests on the dev stacks
  // they start (about 0.5); separate processes, ports (freePort), data dirs and Postgres each, so
  // on two cores they overlap instead of queueing (one after the other took 12 minutes here).
  // The script tests run one file at a time until the workerd shards end, then in all their lanes
  // (scripts/test-scripts.ts).
  {
    name: "tests",
    scripts: ["test:workerd", "test:scripts", "test:companion"],
    together: true,
    widenAfter: "test:workerd",
  },
];

interface Stage {
  name: string;
  /** npm scripts, run one after another, or all at once when `together`. */
  scripts: string[];
  together?: boolean;
  /** When this script of the stage ends, EDGECLAW_TEST_WIDEN_FILE is created for the others. */
  widenAfter?: string;
}

interface Timing {
  name: string;
  seconds: number;
  ok: boolean;
}

const SCRIPT_TIMEOUT_S = countFromEnv("EDGECLAW_TEST_SCRIPT_TIMEOUT", 2400);
const PROGRESS_EVERY_MS = 5 * 60_000;
/** The exit code of a script ended at its deadline (as timeout(1) uses). */
const TIMED_OUT = 124;

function runScript(script: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    // Its own process group, so the deadline ends the whole tree under it.
    const child = spawn("npm", ["run", "--silent", script], {
      stdio: "inherit",
      detached: true,
      env,
    });
    track(child);
    let timedOut = false;
    const disarm = deadline(child, SCRIPT_TIMEOUT_S * 1000, () => {
      timedOut = true;
      return `npm test: "npm run ${script}" still runs after ${SCRIPT_TIMEOUT_S} s (EDGECLAW_TEST_SCRIPT_TIMEOUT); ending it.`;
    });
    child.once("error", () => resolve(127));
    child.once("exit", (code, signal) => {
      disarm();
      resolve(timedOut ? TIMED_OUT : (code ?? (signal ? 128 : 1)));
    });
  });
}

/** Runs a stage's scripts side by side, saying every few minutes which are still running. */
async function runTogether({ scripts, widenAfter }: Stage): Promise<number[]> {
  const started = performance.now();
  const pending = new Set(scripts);
  const widenDir = widenAfter ? mkdtempSync(join(tmpdir(), "edgeclaw-test-")) : undefined;
  const widenFile = widenDir && join(widenDir, "widen");
  const env = widenFile ? { ...process.env, EDGECLAW_TEST_WIDEN_FILE: widenFile } : process.env;
  const progress = setInterval(() => {
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    console.log(`\nnpm test: after ${seconds} s still running: ${[...pending].join(", ")}`);
  }, PROGRESS_EVERY_MS);
  progress.unref();
  try {
    return await Promise.all(
      scripts.map((script) =>
        runScript(script, env).then((code) => {
          pending.delete(script);
          if (widenFile && script === widenAfter) writeFileSync(widenFile, "");
          const seconds = ((performance.now() - started) / 1000).toFixed(0);
          console.log(`\nnpm test: ${script} ended after ${seconds} s (exit ${code})`);
          return code;
        }),
      ),
    );
  } finally {
    clearInterval(progress);
    if (widenDir) rmSync(widenDir, { recursive: true, force: true });
  }
}

async function runStage(stage: Stage): Promise<number> {
  if (stage.together) {
    const codes = await runTogether(stage);
    return codes.find((code) => code !== 0) ?? 0;
  }
  for (const script of stage.scripts) {
    const code = await runScript(script);
    if (code !== 0) return code;
  }
  return 0;
}

function table(timings: Timing[]): string {
  const width = Math.max(...timings.map((timing) => timing.name.length));
  const total = timings.reduce((sum, timing) => sum + timing.seconds, 0);
  const rows = timings.map(
    (timing) =>
      `  ${timing.name.padEnd(width)}  ${timing.seconds.toFixed(0).padStart(5)} s${timing.ok ? "" : "  FAILED"}`,
  );
  return [...rows, `  ${"total".padEnd(width)}  ${total.toFixed(0).padStart(5)} s`].join("\n");
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const known = STAGES.flatMap((stage) => stage.scripts);
  const unknown = wanted.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    console.error(
      `npm test: unknown stage ${unknown.join(", ")}; the stages are ${known.join(", ")}`,
    );
    return 2;
  }
  const stages =
    wanted.length > 0
      ? STAGES.flatMap((stage) => {
          const scripts = stage.scripts.filter((script) => wanted.includes(script));
          return scripts.length ? [{ ...stage, scripts }] : [];
        })
      : STAGES;
  const timings: Timing[] = [];
  let code = 0;
  for (const stage of stages) {
    console.log(
      `\n=== ${stage.name} (npm run ${stage.scripts.join(stage.together ? " & " : " && ")})`,
    );
    const started = performance.now();
    code = await runStage(stage);
    const timing = {
      name: stage.name,
      seconds: (performance.now() - started) / 1000,
      ok: code === 0,
    };
    timings.push(timing);
    if (process.env.EDGECLAW_STAGE_TIMES)
      appendFileSync(
        process.env.EDGECLAW_STAGE_TIMES,
        `${timing.name}\t${timing.seconds.toFixed(1)}\t${timing.ok ? "ok" : "FAILED"}\n`,
      );
    if (code !== 0) break;
  }
  console.log(`\nnpm test stages (wall-clock):\n${table(timings)}`);
  return code;
}

main().then((code) => process.exit(code));
