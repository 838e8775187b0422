import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { workerBundleCache } from "../../scripts/lib/worker-bundle-cache.ts";
import { tempProject } from "./helpers.ts";

/**
 * The local Worker's bundle cache (scripts/lib/worker-bundle-cache.ts): a bundle is reused only
 * while every file esbuild read and every key file still has its content and the defines are the
 * same. The "build" here writes what wrangler's would (the bundle and esbuild's metafile).
 */
const SHAPE = { name: "edgeclaw", compatibilityDate: "2026-04-20" };

function project(): string {
  return tempProject({
    "wrangler.toml": 'name = "edgeclaw"\n',
    "package.json": "{}",
    "src/index.ts": "export default 1;\n",
    "src/dep.ts": "export const dep = 2;\n",
  });
}

/** A build of `dir` into `outDir`: the bundle holds its sources' text, the metafile names them. */
function build(dir: string, outDir: string): string {
  mkdirSync(join(dir, outDir), { recursive: true });
  const sources = ["src/index.ts", "src/dep.ts"];
  writeFileSync(
    join(dir, outDir, "index.js"),
    sources.map((source) => readFileSync(join(dir, source), "utf8")).join(""),
  );
  const metafile = join(dir, outDir, "bundle-meta.json");
  writeFileSync(
    metafile,
    JSON.stringify({
      inputs: Object.fromEntries(
        [...sources, "node-built-in-modules:node:os", "<define:EDGECLAW_BUNDLED_CONFIG>"].map(
          (s) => [s, {}],
        ),
      ),
      outputs: { [`${outDir}/index.js`]: {} },
    }),
  );
  return metafile;
}

/** Makes the project's files look older than a build that starts now. */
function age(dir: string, ...files: string[]): void {
  const past = new Date(Date.now() - 60_000);
  for (const file of files) utimesSync(join(dir, file), past, past);
}

describe("the local Worker's bundle cache", () => {
  it("reuses a bundle while its inputs, key files and defines are unchanged, and rebuilds after any change", () => {
    const dir = project();
    age(dir, "src/index.ts", "src/dep.ts");
    const cache = workerBundleCache<typeof SHAPE>(dir, ["A:1"], {});
    assert.ok(cache);
    assert.equal(cache.restore(join(dir, "out")), undefined, "nothing stored yet");
    cache.store(join(dir, "out"), build(dir, "out"), Date.now(), SHAPE);

    assert.deepEqual(cache.restore(join(dir, "other")), SHAPE);
    assert.equal(
      readFileSync(join(dir, "other", "index.js"), "utf8"),
      "export default 1;\nexport const dep = 2;\n",
    );
    assert.deepEqual(readdirSync(join(dir, "other")), ["index.js"], "only esbuild's outputs");

    assert.equal(workerBundleCache(dir, ["A:2"], {})!.restore(join(dir, "x")), undefined);
    // Each build is a process of its own: the key files are read when it opens the cache.
    const again = () => workerBundleCache<typeof SHAPE>(dir, ["A:1"], {})!;
    writeFileSync(join(dir, "wrangler.toml"), 'name = "edgeclaw"\nminify = true\n');
    assert.equal(again().restore(join(dir, "x")), undefined, "wrangler.toml is part of the key");
    writeFileSync(join(dir, "wrangler.toml"), 'name = "edgeclaw"\n');
    assert.deepEqual(again().restore(join(dir, "x")), SHAPE, "back to the stored content");

    writeFileSync(join(dir, "src/dep.ts"), "export const dep = 3;\n");
    assert.equal(again().restore(join(dir, "x")), undefined, "a source file changed");
    writeFileSync(join(dir, "src/dep.ts"), "export const dep = 2;\n");
    assert.deepEqual(again().restore(join(dir, "x")), SHAPE, "same content, whatever its mtime");
  });

  it("keeps no bundle whose input was saved while it was being built", () => {
    const dir = project();
    age(dir, "src/index.ts");
    const startedAt = Date.now() - 1_000;
    // src/dep.ts was just written (after the build started): the bundle may hold its old text.
    const cache = workerBundleCache<typeof SHAPE>(dir, [], {})!;
    cache.store(join(dir, "out"), build(dir, "out"), startedAt, SHAPE);
    assert.equal(cache.restore(join(dir, "x")), undefined);
  });

  it("is off with EDGECLAW_DEV_BUILD_CACHE=0 and keeps the eight most recently used entries", () => {
    const dir = project();
    age(dir, "src/index.ts", "src/dep.ts");
    assert.equal(workerBundleCache(dir, [], { EDGECLAW_DEV_BUILD_CACHE: "0" }), undefined);
    for (let n = 0; n < 10; n++) {
      workerBundleCache(dir, [`N:${n}`], {})!.store(
        join(dir, "out"),
        build(dir, "out"),
        Date.now(),
        SHAPE,
      );
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5); // distinct mtimes
    }
    const root = join(dir, "node_modules", ".cache", "edgeclaw", "worker-bundles");
    assert.equal(readdirSync(root).length, 8);
    assert.equal(workerBundleCache(dir, ["N:9"], {})!.restore(join(dir, "x")) !== undefined, true);
    assert.equal(workerBundleCache(dir, ["N:0"], {})!.restore(join(dir, "x")), undefined);
    assert.equal(existsSync(join(dir, "out", "bundle-meta.json")), true, "the caller removes it");
  });
});
