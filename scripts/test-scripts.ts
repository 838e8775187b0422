import { spawn } from "node:child_process";
import { existsSync, globSync } from "node:fs";
import { deadline, countFromEnv, track } from "./lib/supervised-child.ts";

/**
 * `npm run test:scripts`: Node's test runner over test/scripts/*.node-test.ts, each file in its
 * own `node --test` process, in lanes side by side. Each file's output is printed whole when it
 * ends, so lanes never interleave, and a summary closes the run.
 *
 * EDGECLAW_TEST_SCRIPT_LANES sets how many files run at once (default 2). Under `npm test`, the
 * files run one at a time while the workerd shards run, and in all lanes once they end: with
 * more beside the shards, the workerd timing tests (the container idle window, 50 ms leases)
 * flaked on two cores, and once the shards are done the files mostly wait on the dev stacks they
 * start. scripts/test.ts says so by creating the file EDGECLAW_TEST_WIDEN_FILE names.
 * Arguments are file paths to run instead of all.
 */

const LANES = countFromEnv("EDGECLAW_TEST_SCRIPT_LANES", 2);
const FILE_TIMEOUT_MS = countFromEnv("EDGECLAW_TEST_FILE_TIMEOUT", 900) * 1000;
const WIDEN_FILE = process.env.EDGECLAW_TEST_WIDEN_FILE;

interface FileResult {
  file: string;
  code: number;
  seconds: number;
  pass: number;
  fail: number;
}

function lanesNow(): number {
  return WIDEN_FILE && !existsSync(WIDEN_FILE) ? 1 : LANES;
}

/** Runs one test file; its output is held and printed whole when it ends. */
function runFile(file: string): Promise<FileResult> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--test", "--test-timeout=600000", "--test-force-exit", file],
    { stdio: ["ignore", "pipe", "pipe"], detached: true, env: process.env },
  );
  track(child);
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const disarm = deadline(
    child,
    FILE_TIMEOUT_MS,
    () => `test:scripts: ${file} still runs after ${FILE_TIMEOUT_MS / 1000} s; ending it.`,
  );
  return new Promise((resolve) => {
    child.once("close", (code, signal) => {
      disarm();
      const seconds = (performance.now() - started) / 1000;
      const count = (name: string) =>
        Number(new RegExp(`^ℹ ${name} (\\d+)$`, "m").exec(output)?.[1] ?? 0);
      const result = {
        file,
        code: code ?? (signal ? 128 : 1),
        seconds,
        pass: count("pass"),
        fail: count("fail"),
      };
      process.stdout.write(
        `\n--- ${file} (${seconds.toFixed(0)} s, exit ${result.code})\n${output}`,
      );
      resolve(result);
    });
  });
}

async function main(): Promise<number> {
  const requested = process.argv.slice(2);
  const files = requested.length ? requested : globSync("test/scripts/*.node-test.ts").sort();
  const queue = [...files];
  const results: FileResult[] = [];
  const running = new Set<Promise<void>>();
  const started = performance.now();
  while (queue.length > 0 || running.size > 0) {
    while (queue.length > 0 && running.size < lanesNow()) {
      const file = queue.shift()!;
      const run: Promise<void> = runFile(file).then((result) => {
        results.push(result);
        running.delete(run);
      });
      running.add(run);
    }
    // Wakes for a file's end, or a second later to see whether more lanes have opened.
    await Promise.race([...running, new Promise((resolve) => setTimeout(resolve, 1000))]);
  }
  const failed = results.filter((result) => result.code !== 0);
  const total = (key: "pass" | "fail") => results.reduce((sum, result) => sum + result[key], 0);
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
  console.log(
    [
      `\ntest:scripts: ${results.length} files, ${total("pass")} tests passed, ${total("fail")} failed, in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      `  slowest: ${slowest.map((result) => `${result.file.replace(/^test\/scripts\//, "")} ${result.seconds.toFixed(0)} s`).join(", ")}`,
      ...failed.map((result) => `  FAILED: ${result.file} (exit ${result.code})`),
    ].join("\n"),
  );
  return failed.length ? 1 : 0;
}

main().then((code) => process.exit(code));
