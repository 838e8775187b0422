import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { runWrangler, stripAnsi, uploadSizeLine } from "./wrangler.ts";
import { workerBundleCache } from "./worker-bundle-cache.ts";

/**
 * The browser Worker's bundle (wrangler.browser.toml → workers/browser/), built as a deploy would
 * build it (`wrangler deploy --dry-run`), for the test pool's auxiliary Worker (vitest.config.ts) and
 * the browser bench. @cloudflare/playwright makes it ~2.4 MB, so a build is kept while none of
 * the files esbuild read changed (worker-bundle-cache.ts, keyed also by wrangler.browser.toml).
 */

export const BROWSER_WRANGLER_CONFIG = "wrangler.browser.toml";

export interface BrowserWorkerBuild {
  /** The bundle's entry module (ES module, imports only node:* and cloudflare:*). */
  scriptPath: string;
  /** wrangler's "Total Upload: … / gzip: …" line, as the build that made it printed it. */
  sizeLine?: string;
  /** wrangler.browser.toml's, for a runtime config that serves the bundle (npm run dev's workerd). */
  compatibilityDate: string;
  compatibilityFlags: string[];
}

type BuildRecord = Omit<BrowserWorkerBuild, "scriptPath">;

export async function buildBrowserWorker(
  projectDir: string,
  outDir = join(projectDir, "node_modules", ".cache", "edgeclaw", "browser-worker"),
): Promise<BrowserWorkerBuild> {
  const configText = readFileSync(join(projectDir, BROWSER_WRANGLER_CONFIG), "utf8");
  const cache = workerBundleCache<BuildRecord>(projectDir, ["browser-worker v2", configText]);
  const scriptPath = resolve(outDir, "index.js");
  const kept = cache?.restore(outDir);
  if (kept && existsSync(scriptPath)) return { scriptPath, ...kept };
  // wrangler's API (the compatibility settings) loads while its CLI bundles, in a child process.
  const wranglerApi = import("wrangler");
  void wranglerApi.catch(() => undefined); // awaited below, or not needed when the build fails
  const metafile = join(outDir, "bundle-meta.json");
  const startedAt = Date.now();
  const run = await runWrangler(
    [
      "deploy",
      "--dry-run",
      "--config",
      BROWSER_WRANGLER_CONFIG,
      "--outdir",
      outDir,
      "--metafile",
      metafile,
    ],
    { cwd: projectDir },
  );
  if (run.code !== 0)
    throw new Error(
      `the browser Worker did not build (wrangler exit ${run.code}):\n${stripAnsi(run.output)}`,
    );
  const config = (await wranglerApi).unstable_readConfig({
    config: join(projectDir, BROWSER_WRANGLER_CONFIG),
  });
  if (!config.compatibility_date)
    throw new Error(`${BROWSER_WRANGLER_CONFIG} has no compatibility_date`);
  const record: BuildRecord = {
    sizeLine: uploadSizeLine(run.output),
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
  };
  cache?.store(outDir, metafile, startedAt, record);
  rmSync(metafile, { force: true });
  rmSync(join(outDir, "index.js.map"), { force: true });
  return { scriptPath, ...record };
}
