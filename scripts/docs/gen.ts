import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { adminReference } from "./admin-page.ts";
import { cliReference } from "./cli-page.ts";
import { configReference } from "./config-page.ts";
import { metricsReference } from "./metrics-page.ts";

/**
 * `npm run docs:gen` writes the reference pages under docs/reference/ from the code;
 * `npm run docs:gen -- --check` only says which are stale (exit 1), as the docs test does.
 */

export async function referencePages(root: string): Promise<Record<string, string>> {
  return {
    "docs/reference/config.md": configReference(root),
    "docs/reference/cli.md": cliReference(),
    "docs/reference/admin-api.md": await adminReference(root),
    "docs/reference/metrics.md": metricsReference(),
  };
}

/** Pages whose file differs from what the code generates now. */
export async function stalePages(root: string): Promise<string[]> {
  return Object.entries(await referencePages(root))
    .filter(([path, text]) => {
      try {
        return readFileSync(join(root, path), "utf8") !== text;
      } catch {
        return true;
      }
    })
    .map(([path]) => path);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  if (process.argv.includes("--check")) {
    const stale = await stalePages(root);
    for (const path of stale) console.error(`stale: ${path} (run npm run docs:gen)`);
    process.exit(stale.length ? 1 : 0);
  }
  for (const [path, text] of Object.entries(await referencePages(root))) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    console.log(`wrote ${path}`);
  }
}
