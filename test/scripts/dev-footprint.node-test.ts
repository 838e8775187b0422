import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { sampleTree } from "../../scripts/bench/lib/process-tree.ts";
import { freePort } from "../../scripts/lib/local-ports.ts";
import { LOCAL_POSTGRES_SETTINGS } from "../../scripts/lib/local-postgres.ts";
import { workerdConfig } from "../../scripts/lib/workerd-config.ts";
import { projectRoot, tempProject } from "./helpers.ts";

/**
 * What `npm run dev` keeps resident. Memory figures are not timings: the machine's load does not
 * change them much, so the bounds hold on a busy CI box (figures: `npx tsx scripts/bench/memory.ts`).
 */
const MiB = 1024 * 1024;
const READY = /edgeclaw ready on (http:\/\/127\.0\.0\.1:\d+)/;

const cleanups: (() => void)[] = [];
after(() => {
  for (const cleanup of cleanups) cleanup();
});

/** One fresh-data-dir start of local Postgres in a child process of its own (fixtures/pglite-rss.ts). */
function measureStart(): { grown: number; sharedBuffers?: string; migrated: number } {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", join(projectRoot, "test/scripts/fixtures/pglite-rss.ts")],
    { cwd: projectRoot, encoding: "utf8", timeout: 120_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}");
}

describe("local Postgres", () => {
  it("runs with buffers sized for one developer, and a new data dir's initdb does not stay resident", () => {
    // initdb in the serving process left ~500 MB resident on top of the ~130 MiB a start from the
    // template grows a quiet process by (and 128 MB of default buffers). On a loaded 2-core machine
    // a start alone was seen at 400-570 MiB, three times in a row while the companion tests ran
    // beside it (the collector and the WASM compiler lag behind), so the bound sits between the
    // two: the lowest of up to three starts, each in a fresh process, under 600 MiB. The quiet
    // figure is the bench's to watch (scripts/bench/memory.ts).
    const runs: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const start = measureStart();
      assert.equal(start.sharedBuffers, LOCAL_POSTGRES_SETTINGS.shared_buffers);
      assert.equal(start.migrated, 1, "the migrations ran on the server this process serves from");
      runs.push(start.grown);
      if (start.grown < 600 * MiB) return;
    }
    assert.fail(
      `PGlite grew a fresh process by ${runs.map((grown) => Math.round(grown / MiB)).join(", ")} MiB in three starts`,
    );
  });
});

describe("workerd config for the local Worker", () => {
  const base = {
    worker: {
      name: "edgeclaw",
      compatibilityDate: "2026-04-20",
      compatibilityFlags: ["nodejs_compat"],
      durableObjects: {
        SESSIONS: { className: "SessionDO", useSQLite: true },
        OTHER: { className: "SessionDO", useSQLite: true },
      },
      vars: { PLAIN: 'say "hi"\\ ☕\n' },
    },
    moduleFile: "index.js",
    address: "127.0.0.1:8787",
    durableObjectDir: "/data/wrangler/v3/do",
    environmentBindings: ["ANTHROPIC_API_KEY"],
  };

  it("names secrets by environment variable only, keeps wrangler dev's storage layout, and escapes text", () => {
    const config = workerdConfig({ ...base, clientAddress: "127.0.0.1" });
    assert.match(config, /\(name = "ANTHROPIC_API_KEY", fromEnvironment = "ANTHROPIC_API_KEY"\)/);
    assert.match(config, /\(name = "PLAIN", text = "say \\"hi\\"\\\\ \\xe2\\x98\\x95\\x0a"\)/);
    // One namespace per class, keyed as wrangler dev keys it (so a data dir keeps its sessions).
    assert.equal(
      config.match(/className = "SessionDO", uniqueKey = "edgeclaw-SessionDO", enableSql = true/g)
        ?.length,
      1,
    );
    assert.match(config, /disk = \(path = "\/data\/wrangler\/v3\/do", writable = true\)/);
  });

  it("sets CF-Connecting-IP on a loopback listener and strips a client's claim otherwise", () => {
    assert.match(
      workerdConfig({ ...base, clientAddress: "127.0.0.1" }),
      /injectRequestHeaders = \[\(name = "CF-Connecting-IP", value = "127\.0\.0\.1"\)\]/,
    );
    assert.match(workerdConfig(base), /injectRequestHeaders = \[\(name = "CF-Connecting-IP"\)\]/);
  });
});

describe("npm run dev footprint", () => {
  it("keeps under 640 MiB resident across its whole process tree when idle, with no bundler or wrangler left running", async () => {
    const dir = tempProject();
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const child = spawn("npm", ["run", "--silent", "dev"], {
      cwd: projectRoot,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        EDGECLAW_DATA_DIR: join(dir, "data"),
        EDGECLAW_PORT: String(port),
        EDGECLAW_CONFIG: "",
        EDGECLAW_FAKE_MODEL: "1",
      },
    });
    const stopGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // gone
      }
    };
    cleanups.push(() => stopGroup("SIGKILL"));
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no ready line after 180 s:\n${output}`)),
        180_000,
      );
      child.stdout!.on("data", () => {
        if (READY.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => reject(new Error(`dev exited (${code}):\n${output}`)));
    });
    // Settled: the build's short-lived processes are gone.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const tree = sampleTree(child.pid!);
    const total = tree.reduce((sum, process) => sum + process.rssBytes, 0);
    const listing = tree.map((p) => `${p.role} ${Math.round(p.rssBytes / MiB)} MiB`).join(", ");
    assert.deepEqual(
      tree.filter((p) => /wrangler|^esbuild$/.test(p.role)).map((p) => p.role),
      [],
      listing,
    );
    // 375 MiB after the hardening work; 424 MiB on CI once PGlite loaded pgvector (memory search)
    // and the Worker carried five more channels (which part grew is not measured yet); 514 MiB on
    // Node 24 with workerd 1.20261117 (npm 67, dev.ts 272, local-worker.mjs 60, workerd 113 MiB:
    // every Node process holds more on V8 13 than on Node 20's V8 11); 521-581 MiB on 2026-12-02
    // after the parallel dev start and bundle cache (dev.ts 282-350 MiB: which part grew is not
    // measured yet — noted in that day's closing note); 588-597 MiB on 2026-12-03 once dev serves
    // the browser Worker (@cloudflare/playwright) in its workerd: workerd 113 → 142 MiB, the rest
    // unchanged (569 MiB with EDGECLAW_DEV_BROWSER=0), so the bound moved from 600 to 640 MiB.
    // It still catches a leftover wrangler/bundler or a leaking host.
    assert.ok(total < 640 * MiB, `${Math.round(total / MiB)} MiB: ${listing}`);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200);

    const exited = new Promise((resolve) => child.once("exit", resolve));
    stopGroup("SIGINT");
    await exited;
    const left = spawnSync("ps", ["-eo", "args="], { encoding: "utf8" })
      .stdout.split("\n")
      .filter((line) => line.includes(join(dir, "data")));
    assert.deepEqual(left, []);
  });
});
