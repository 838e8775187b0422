import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  buildCompanionBundle,
  companionBundleStale,
  startAnsweringCompanion,
  type RunningCompanion,
} from "../../scripts/lib/dev-companion.ts";
import type { DevCompanionPlan } from "../../scripts/lib/dev-companion-plan.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";

/**
 * `npm run dev` chooses the companion's port and the companion binds it moments later; another
 * process can take it in between (the test suites' servers did, and the companion exited with
 * EADDRINUSE). The real companion process is started here on a port already taken: dev must
 * start it again on another port without reporting the first exit, and must not retry a port
 * the user asked for.
 */

// Sandbox only: no Worker to reach, no lease, no account (the companion still binds its port).
const plan: DevCompanionPlan = {
  raw: {},
  accounts: [],
  env: { EDGECLAW_COMPANION_SANDBOX_ONLY: "1" },
  warnings: [],
};
const HOST = "127.0.0.1";
const dirs: string[] = [];
const started: RunningCompanion[] = [];
let taken: Server;
let takenPort: number;

before(async () => {
  if (companionBundleStale()) await buildCompanionBundle();
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen({ port: 0, host: HOST }, resolve));
  takenPort = (taken.address() as { port: number }).port;
});
after(async () => {
  await Promise.all(started.map((running) => running.stop()));
  await new Promise((resolve) => taken.close(resolve));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** startAnsweringCompanion as dev calls it, with the port and the free-port finder given. */
async function start(
  port: number | undefined,
  freePortFinder: () => Promise<number>,
  env: Record<string, string> = plan.env,
) {
  const exits: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), "edgeclaw-devport-"));
  dirs.push(dir);
  const result = await startAnsweringCompanion({
    plan: { ...plan, env },
    workerUrl: "http://127.0.0.1:9",
    host: HOST,
    port,
    listenMs: 15_000,
    freePort: freePortFinder,
    dataDir: dir,
    onUnexpectedExit: (how) => exits.push(how),
  });
  started.push(result.running);
  return { ...result, exits };
}

describe("npm run dev's companion port", () => {
  it("starts the companion again on another port when the one dev chose was taken before it bound it", async () => {
    const offered: number[] = [];
    // The first port offered is the one another process took since it was found free.
    const { running, answered, exits } = await start(undefined, async () => {
      const port = offered.length === 0 ? takenPort : await freePort(HOST);
      offered.push(port);
      return port;
    });
    assert.equal(answered, true);
    assert.equal(offered.length, 2);
    assert.equal(running.url, `http://${HOST}:${offered[1]}`);
    assert.deepEqual(exits, []);
    const health = await fetch(`${running.url}/healthz`);
    assert.equal(health.status, 200);
  });

  it("tries a port the user asked for once, and reports its exit", async () => {
    const { running, answered, exits } = await start(takenPort, () =>
      assert.fail("a port the user asked for is not replaced"),
    );
    assert.equal(answered, false);
    assert.equal(running.url, `http://${HOST}:${takenPort}`);
    assert.deepEqual(exits, ["code 1"]);
  });

  it("reports a companion that fails on its own at once, on a free port, without another try", async () => {
    const offered: number[] = [];
    // An invalid setting: the companion refuses to start whatever its port.
    const { answered, exits } = await start(
      undefined,
      async () => {
        const port = await freePort(HOST);
        offered.push(port);
        return port;
      },
      { EDGECLAW_COMPANION_SANDBOX_ONLY: "maybe" },
    );
    assert.equal(answered, false);
    assert.equal(offered.length, 1);
    assert.deepEqual(exits, ["code 1"]);
  });
});
