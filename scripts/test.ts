import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

/**
 * `npm test`: the project's checks as named stages, each an npm script, run in order and timed, so
 * CI time is visible per stage and a regression points at its stage. The first failing stage stops
 * the run (the later ones would only repeat its noise). A table of wall-clock seconds is printed at
 * the end, and appended to the file named by EDGECLAW_STAGE_TIMES when set (.ci/run prints its
 * install stage and these in one table).
 *
 * `npm test -- <stage> …` runs only the named stages, in the order given.
 */
const STAGES = [
  { name: "lint", script: "lint" },
  { name: "typecheck", script: "typecheck" },
  { name: "build", script: "build" },
  { name: "workerd tests", script: "test:workerd" },
  { name: "script tests", script: "test:scripts" },
  { name: "companion tests", script: "test:companion" },
] as const;

interface Timing {
  name: string;
  seconds: number;
  ok: boolean;
}

function runScript(script: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn("npm", ["run", "--silent", script], { stdio: "inherit" });
    child.once("error", () => resolve(127));
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
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
  const unknown = wanted.filter((name) => !STAGES.some((stage) => stage.script === name));
  if (unknown.length > 0) {
    console.error(
      `npm test: unknown stage ${unknown.join(", ")}; the stages are ${STAGES.map((stage) => stage.script).join(", ")}`,
    );
    return 2;
  }
  const stages =
    wanted.length > 0
      ? wanted.map((name) => STAGES.find((stage) => stage.script === name)!)
      : [...STAGES];
  const timings: Timing[] = [];
  let code = 0;
  for (const stage of stages) {
    console.log(`\n=== ${stage.name} (npm run ${stage.script})`);
    const started = performance.now();
    code = await runScript(stage.script);
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
