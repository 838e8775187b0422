import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  DataDirHeldError,
  DataDirLockedError,
  LOCK_FILE,
  lockDataDir,
  readLiveDevState,
} from "../../scripts/lib/data-dir-lock.ts";
import { processInfo } from "../../scripts/lib/process-table.ts";
import { tempProject } from "./helpers.ts";

/** The data-dir lock of `npm run dev` against dead owners that look alive, and orphans. */
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) if (child.pid) tryKill(-child.pid);
});

function tryKill(pid: number) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** A process of its own group that lives until the test ends; resolves once `script` printed a line. */
function startSleeper(
  script = `console.log("ready"); setInterval(() => {}, 1000)`,
  args: string[] = [],
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", script, ...args], {
    detached: true,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve) => child.stdout!.once("data", () => resolve(child)));
}

function dataDirWithLock(content: string): string {
  const dir = join(tempProject(), "data");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, LOCK_FILE), content);
  return dir;
}

describe("data-dir lock", () => {
  it("refuses while its owner runs (same pid, same start time), naming the pid", async () => {
    const owner = await startSleeper();
    const dir = dataDirWithLock(
      JSON.stringify({ pid: owner.pid, startTime: processInfo(owner.pid!)!.startTime }),
    );
    assert.throws(
      () => lockDataDir(dir),
      (error) => error instanceof DataDirLockedError && error.message.includes(`pid ${owner.pid}`),
    );
  });

  it("takes over a lock whose pid now belongs to another process (a reused pid)", async () => {
    const stranger = await startSleeper();
    const dir = dataDirWithLock(JSON.stringify({ pid: stranger.pid, startTime: "1" }));
    const lock = lockDataDir(dir);
    lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  });

  it("takes over a lock whose owner is a zombie", async () => {
    // The background `sleep` becomes a child of the exec'd `sleep 30`, which never reaps it: a
    // zombie once it exits. It must outlive the exec: a `sleep 0` could end while `sh` still ran
    // and be reaped by it (seen once in a fresh-clone CI: "the fixture is a zombie" failed).
    const parent = spawn("sh", ["-c", "sleep 0.5 & echo $!; exec sleep 30"], {
      detached: true,
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(parent);
    const zombie = Number.parseInt(
      await new Promise<string>((resolve) =>
        parent.stdout!.once("data", (chunk: Buffer) => resolve(chunk.toString())),
      ),
      10,
    );
    for (let i = 0; i < 100 && !processInfo(zombie)?.zombie; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(processInfo(zombie)?.zombie, true, "the fixture is a zombie");
    const dir = dataDirWithLock(`${zombie}\n`);
    lockDataDir(dir).release();
  });

  it("names a leftover process that still holds a file in the data dir, and stays unlocked", async () => {
    const dir = join(tempProject(), "data");
    mkdirSync(join(dir, "wrangler"), { recursive: true });
    const orphan = await startSleeper(
      `const fs = require("node:fs"); globalThis.fd = fs.openSync(process.argv[1], "w"); console.log("open"); setInterval(() => {}, 1000)`,
      [join(dir, "wrangler", "do.sqlite")],
    );
    assert.throws(
      () => lockDataDir(dir),
      (error) =>
        error instanceof DataDirHeldError &&
        error.message.includes(`pid ${orphan.pid}`) &&
        error.message.includes(`kill ${orphan.pid}`),
    );
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  });

  it("names live members of the process group a dead owner recorded", async () => {
    const leftover = await startSleeper();
    const dead = await startSleeper();
    tryKill(dead.pid!);
    await new Promise((resolve) => dead.once("exit", resolve));
    const dir = dataDirWithLock(JSON.stringify({ pid: dead.pid, wranglerPgid: leftover.pid }));
    assert.throws(
      () => lockDataDir(dir),
      (error) =>
        error instanceof DataDirHeldError && error.holders.some((h) => h.pid === leftover.pid),
    );
  });

  it("publishes the running stack's URL for the CLI, and only while its owner runs", () => {
    const dir = join(tempProject(), "data");
    mkdirSync(dir, { recursive: true });
    const lock = lockDataDir(dir);
    lock.publish({ url: "http://127.0.0.1:9999", tokenFile: join(dir, "gateway-token") });
    assert.equal(readLiveDevState(dir)?.url, "http://127.0.0.1:9999");
    lock.release();
    assert.equal(readLiveDevState(dir), undefined);
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: process.pid, startTime: "1", url: "http://127.0.0.1:9999" }),
    );
    assert.equal(readLiveDevState(dir), undefined, "a reused pid is not the stack");
  });
});
