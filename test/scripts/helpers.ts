import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const projectRoot = fileURLToPath(new URL("../..", import.meta.url));
export const tsxCli = join(projectRoot, "node_modules", "tsx", "dist", "cli.mjs");
/** `npx edgeclaw`: the CLI as a user runs it (from its cached bundle, scripts/lib/node-bundle.mjs). */
export const edgeclawBin = join(projectRoot, "bin", "edgeclaw.mjs");

/** A temporary project folder holding the given files (path → content). */
export function tempProject(files: Record<string, string | Uint8Array> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "edgeclaw-test-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}
