/**
 * One build of the local Worker for `npm run dev`, in a short-lived process (local-worker.mjs runs
 * it at start and on every save): the bundle `wrangler deploy --dry-run` makes (what a deploy
 * uploads) and the workerd config that serves it with the bindings wrangler derives from
 * wrangler.toml. wrangler's API and the bundler load only here, so none of it stays resident. A
 * bundle built before from the same files and config is reused (worker-bundle-cache.ts).
 *
 *   node --import tsx scripts/lib/local-worker-build.ts --out-dir DIR --address HOST:PORT \
 *     --do-dir DIR [--env-binding NAME …] [--define NAME:JSON …] [--browser-run URL]
 *
 * With --browser-run (the loopback Browser Run stand-in dev started), the browser Worker
 * (wrangler.browser.toml) is built too, at the same time and cached the same way, and served
 * beside the main Worker, bound to it as BROWSER_WORKER.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildBrowserWorker } from "./browser-worker-build.ts";
import { runWrangler, stripAnsi } from "./wrangler.ts";
import { workerBundleCache } from "./worker-bundle-cache.ts";
import { workerdConfig, type WorkerShape } from "./workerd-config.ts";

/** Beside --out-dir, not in it: the two builds run at once, and each owns its folder. */
const BROWSER_BUILD_DIR = "browser-worker-build";

const { values } = parseArgs({
  options: {
    "out-dir": { type: "string" },
    address: { type: "string" },
    "do-dir": { type: "string" },
    "client-address": { type: "string" },
    "env-binding": { type: "string", multiple: true, default: [] },
    define: { type: "string", multiple: true, default: [] },
    "browser-run": { type: "string" },
  },
  strict: true,
});

async function main(): Promise<number> {
  if (!values["out-dir"] || !values.address || !values["do-dir"])
    throw new Error("--out-dir, --address and --do-dir are required");
  const outDir = resolve(values["out-dir"]);
  const projectDir = process.cwd();
  const browserRunUrl = values["browser-run"];
  // Its own wrangler run, beside the main Worker's: together they take about as long as the slower.
  const browserBuild = browserRunUrl
    ? buildBrowserWorker(projectDir, join(outDir, "..", BROWSER_BUILD_DIR))
    : undefined;
  void browserBuild?.catch(() => undefined); // awaited below
  const cache = workerBundleCache<WorkerShape>(projectDir, values.define);
  let shape = cache?.restore(outDir);
  if (!shape) {
    // wrangler's API (for the bindings) loads while its CLI bundles, in a child process.
    const wranglerApi = import("wrangler");
    void wranglerApi.catch(() => undefined); // awaited below, or not needed when the build fails
    const metafile = join(outDir, "bundle-meta.json");
    const startedAt = Date.now();
    const run = await runWrangler(
      [
        "deploy",
        "--dry-run",
        "--outdir",
        outDir,
        "--metafile",
        metafile,
        ...values.define.flatMap((define) => ["--define", define]),
      ],
      { cwd: projectDir },
    );
    if (run.code !== 0) {
      process.stderr.write(stripAnsi(run.output));
      console.error(
        `edgeclaw dev: the Worker did not build (wrangler exit ${run.code}); fix it and save to retry`,
      );
      return 1;
    }
    const wrangler = await wranglerApi;
    const configPath = join(projectDir, "wrangler.toml");
    const config = wrangler.unstable_readConfig({ config: configPath });
    const { workerOptions } = wrangler.unstable_getMiniflareWorkerOptions(configPath);
    shape = workerShape(config.name ?? "edgeclaw", workerOptions as Record<string, unknown>);
    cache?.store(outDir, metafile, startedAt, shape);
    rmSync(metafile, { force: true });
  }
  let browser: Parameters<typeof workerdConfig>[0]["browser"];
  if (browserBuild && browserRunUrl) {
    try {
      const built = await browserBuild;
      browser = {
        modulePath: `../${BROWSER_BUILD_DIR}/index.js`,
        compatibilityDate: built.compatibilityDate,
        compatibilityFlags: built.compatibilityFlags,
        browserRunUrl,
      };
    } catch (error) {
      // The gateway serves without it; the agent simply has no browser tool until the next save.
      console.error(
        `edgeclaw dev: ${error instanceof Error ? error.message : String(error)}\nedgeclaw dev: the browser Worker is not running: the agent has no browser tool`,
      );
    }
  }
  mkdirSync(values["do-dir"], { recursive: true });
  // The media store of dev: <data dir>/v3/media, beside the Durable Objects' storage.
  const mediaDir = join(dirname(resolve(values["do-dir"])), "media");
  mkdirSync(mediaDir, { recursive: true });
  writeFileSync(
    join(outDir, "workerd.capnp"),
    workerdConfig({
      worker: shape,
      moduleFile: "index.js",
      address: values.address,
      durableObjectDir: resolve(values["do-dir"]),
      environmentBindings: values["env-binding"],
      clientAddress: values["client-address"],
      mediaDir,
      browser,
    }),
  );
  return 0;
}

/** Only what the local config needs, checked: a wrangler upgrade that changes the shape fails loudly. */
function workerShape(name: string, workerOptions: Record<string, unknown>): WorkerShape {
  const options = workerOptions as {
    compatibilityDate?: string;
    compatibilityFlags?: string[];
    durableObjects?: Record<
      string,
      string | { className: string; scriptName?: string; useSQLite?: boolean }
    >;
    bindings?: Record<string, unknown>;
  };
  if (!options.compatibilityDate) throw new Error("wrangler.toml has no compatibility_date");
  const durableObjects: WorkerShape["durableObjects"] = {};
  for (const [binding, value] of Object.entries(options.durableObjects ?? {})) {
    const target = typeof value === "string" ? { className: value } : value;
    if ("scriptName" in target && target.scriptName)
      throw new Error(`${binding}: Durable Objects of another Worker are not supported locally`);
    durableObjects[binding] = {
      className: target.className,
      useSQLite: "useSQLite" in target ? target.useSQLite : false,
    };
  }
  const vars: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.bindings ?? {}))
    vars[key] = typeof value === "string" ? value : JSON.stringify(value);
  return {
    name,
    compatibilityDate: options.compatibilityDate,
    compatibilityFlags: options.compatibilityFlags ?? [],
    durableObjects,
    vars,
  };
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      `edgeclaw dev: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    process.exit(1);
  },
);
