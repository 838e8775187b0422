import { spawn } from "node:child_process";
import { createRequire } from "node:module";

/**
 * `npm run typecheck`: the three TypeScript programs (the Worker with the Workers types, the Node
 * scripts and tests, the companion), started at once instead of one after the other. They share no
 * output (noEmit), so running them side by side only changes the wall-clock time. Each program's
 * diagnostics are printed together under its name once it ends; the exit code is non-zero when any
 * program failed.
 */
const PROGRAMS = [
  { name: "Worker (tsconfig.json)", args: ["--noEmit"] },
  {
    name: "Node scripts and tests (tsconfig.node.json)",
    args: ["--noEmit", "-p", "tsconfig.node.json"],
  },
  {
    name: "companion (companion/tsconfig.json)",
    args: ["--noEmit", "-p", "companion/tsconfig.json"],
  },
];

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

function check(program: (typeof PROGRAMS)[number]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, ...program.args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (error) => {
      console.error(`typecheck ${program.name}: could not start tsc: ${error.message}`);
      resolve(false);
    });
    child.once("exit", (code) => {
      if (code === 0) console.log(`typecheck ${program.name}: ok`);
      else console.error(`typecheck ${program.name}: failed (exit ${code})\n${output.trimEnd()}`);
      resolve(code === 0);
    });
  });
}

const results = await Promise.all(PROGRAMS.map(check));
process.exitCode = results.every(Boolean) ? 0 : 1;
