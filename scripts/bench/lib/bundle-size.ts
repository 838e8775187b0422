import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The Worker's upload size as wrangler reports it (`Total Upload: … / gzip: …`), offline. */
export function workerBundleSize(): string {
  const outdir = mkdtempSync(join(tmpdir(), "edgeclaw-bundle-"));
  try {
    const output = execFileSync(
      "node_modules/.bin/wrangler",
      ["deploy", "--dry-run", "--outdir", outdir],
      {
        env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    return (
      /Total Upload:\s*([^\n]+)/.exec(output)?.[1]?.trim() ?? "unknown (wrangler printed no size)"
    );
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
