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
  /** wrangler's "Total Upload: … / gzip: …" line, when this call built it. */
  sizeLine?: string;
}

export async function buildBrowserWorker(
  projectDir: string,
  outDir = join(projectDir, "node_modules", ".cache", "edgeclaw", "browser-worker"),
): Promise<BrowserWorkerBuild> {
  const configText = readFileSync(join(projectDir, BROWSER_WRANGLER_CONFIG), "utf8");
  const cache = workerBundleCache<{ sizeLine?: string }>(projectDir, [
    "browser-worker",
    configText,
  ]);
  const scriptPath = resolve(outDir, "index.js");
  const kept = cache?.restore(outDir);
  if (kept && existsSync(scriptPath)) return { scriptPath, ...kept };
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
  const sizeLine = uploadSizeLine(run.output);
  cache?.store(outDir, metafile, startedAt, { sizeLine });
  rmSync(metafile, { force: true });
  rmSync(join(outDir, "index.js.map"), { force: true });
  return { scriptPath, sizeLine };
}
