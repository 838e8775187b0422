import assert from "node:assert/strict";
import { spawn, type SpawnOptions } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { deadline, groupListing, track } from "../../scripts/lib/supervised-child.ts";
import { VitestSummary } from "../../scripts/lib/vitest-summary.ts";
import { projectRoot } from "./helpers.ts";

/**
 * npm test's bounds (scripts/test.ts, scripts/test-workerd.ts): a test script that outlives its
 * budget, or a vitest shard that will not exit after its summary, is ended with every process
 * under it and named with what was still running — CI fails in minutes with a reason instead of
 * hanging until its hard limit cuts it off without one.
 */
/** `spawnSync` that leaves the event loop free, so the tests below can run side by side. */
function run(
  command: string,
  args: string[],
  options: SpawnOptions & { timeout: number },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let [stdout, stderr] = ["", ""];
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGTERM"), options.timeout);
    child.once("error", reject);
    child.once("close", (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

// Side by side: the vitest runs below mostly wait (the stall test on 20 s of silence), and none of
// them shares a directory or a process group with another.
describe("npm test's supervised children", { concurrency: true }, () => {
  it("ends the whole process group at the deadline and lists what was still running", async (t) => {
    // A shell with a grandchild, as npm → tsx → vitest → workerd is.
    const child = spawn("bash", ["-c", "sleep 300 & sleep 301; wait"], {
      detached: true,
      stdio: "ignore",
    });
    track(child);
    const printed: string[] = [];
    t.mock.method(console, "error", (line: string) => printed.push(line));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_code, signal) => resolve(signal)),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.match(groupListing(child), /sleep 300\n.*sleep 301/s);

    const started = performance.now();
    deadline(child, 200, () => "the test script overran");
    assert.equal(await exited, "SIGTERM");
    assert.ok(performance.now() - started < 5_000);
    assert.match(printed.join("\n"), /the test script overran\nStill running.*sleep 300/s);
    // The grandchildren went with it: nothing is left in the group.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(groupListing(child), "  (no process left in its group)");
  });

  it("disarmed, the deadline leaves the child alone", async () => {
    const child = spawn("sleep", ["1"], { detached: true, stdio: "ignore" });
    track(child);
    const disarm = deadline(child, 100, () => "must not fire");
    disarm();
    const code = await new Promise((resolve) =>
      child.once("exit", (exitCode) => resolve(exitCode)),
    );
    assert.equal(code, 0);
  });

  it("reads vitest's own summary: finished, and whether anything failed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgeclaw-vitest-summary-"));
    try {
      writeFileSync(join(dir, "vitest.config.mjs"), "export default { test: {} };\n");
      const summaryOf = async (body: string) => {
        writeFileSync(join(dir, "one.test.mjs"), `import { it, expect } from "vitest";\n${body}\n`);
        const vitest = await run(
          join(projectRoot, "node_modules", ".bin", "vitest"),
          ["run", "--root", dir, "--config", join(dir, "vitest.config.mjs")],
          { env: { ...process.env, FORCE_COLOR: "1" }, timeout: 60_000 },
        );
        const summary = new VitestSummary();
        let closed = false;
        for (const line of `${vitest.stdout}\n${vitest.stderr}`.split("\n")) {
          summary.read(line);
          if (VitestSummary.closes(line)) closed = true;
        }
        return {
          closed,
          finished: summary.finished,
          failed: summary.failed,
          files: [...summary.reportedFiles],
          status: vitest.status,
        };
      };
      assert.deepEqual(await summaryOf('it("passes", () => expect(1).toBe(1));'), {
        closed: true,
        files: ["one.test.mjs"],
        finished: true,
        failed: false,
        status: 0,
      });
      assert.deepEqual(await summaryOf('it("fails", () => expect(1).toBe(2));'), {
        closed: true,
        files: ["one.test.mjs"],
        finished: true,
        failed: true,
        status: 1,
      });
      // An error outside any test (vitest's "Errors" line) fails the shard too.
      assert.deepEqual(
        await summaryOf(
          'it("passes", () => { setTimeout(() => { throw new Error("late"); }, 0); });',
        ),
        { closed: true, files: ["one.test.mjs"], finished: true, failed: true, status: 1 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("ends a vitest that goes silent and runs the files it had not reported once more", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgeclaw-vitest-stall-"));
    try {
      // One file passes; the other hangs without a word on its first run only (a marker file
      // remembers it has been tried), as a stalled workers-pool run does.
      writeFileSync(
        join(dir, "vitest.config.mjs"),
        "export default { test: { testTimeout: 120000, fileParallelism: false } };\n",
      );
      writeFileSync(
        join(dir, "a-passes.test.mjs"),
        'import { it, expect } from "vitest";\nit("passes", () => expect(1).toBe(1));\n',
      );
      const marker = join(dir, "tried");
      writeFileSync(
        join(dir, "b-stalls.test.mjs"),
        [
          'import { it, expect } from "vitest";',
          'import { existsSync, writeFileSync } from "node:fs";',
          `const marker = ${JSON.stringify(marker)};`,
          'it("stalls the first time", async () => {',
          "  if (!existsSync(marker)) {",
          '    writeFileSync(marker, "");',
          "    await new Promise((resolve) => setTimeout(resolve, 110000));",
          "  }",
          "  expect(1).toBe(1);",
          "});",
        ].join("\n"),
      );
      const workerd = await run(
        process.execPath,
        [
          "--import",
          "tsx",
          join(projectRoot, "scripts", "test-workerd.ts"),
          "--root",
          dir,
          "--config",
          join(dir, "vitest.config.mjs"),
        ],
        {
          cwd: projectRoot,
          // 20 s of silence: more than a loaded machine takes to start vitest and import a file
          // (4 s was not, in a preview at load 40), far less than the silent test's 110 s.
          env: { ...process.env, EDGECLAW_TEST_SHARDS: "1", EDGECLAW_TEST_STALL_TIMEOUT: "20" },
          timeout: 100_000,
        },
      );
      const output = `${workerd.stdout}\n${workerd.stderr}`;
      assert.equal(workerd.status, 0, output);
      assert.match(
        output,
        /printed nothing for 20 s \(EDGECLAW_TEST_STALL_TIMEOUT\) after [01] file/,
      );
      assert.match(output, /Still running in its process group:/);
      // Which of the two ran first is vitest's choice; the silent one is always among those rerun.
      assert.match(output, /did not report once more:\n(?: {2}\S+\n)* {2}b-stalls\.test\.mjs\n/);
      assert.match(output, /\[rerun\] .*b-stalls\.test\.mjs/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
