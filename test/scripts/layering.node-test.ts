import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { projectRoot } from "./helpers.ts";

/**
 * DESIGN "Arrows point down only": nothing under functions/ or durable-objects/ imports from
 * workers/, types included. What both need (the Env type, the ingest call) lives below them.
 * web/ (the operator pages' markup and browser scripts) sits beside them: the Worker imports it to
 * serve the pages, and it imports nothing from the server side.
 */

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** Every module specifier a file names: static imports/exports (type-only too), dynamic import(), require(). */
export function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\b[^'"`;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const pattern of patterns)
    for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

function upwardImports(layer: string, forbidden: string[] = ["workers"]): string[] {
  const roots = forbidden.map((dir) => join(projectRoot, dir));
  const offenders: string[] = [];
  for (const file of sourceFiles(join(projectRoot, layer))) {
    for (const specifier of specifiers(readFileSync(file, "utf8"))) {
      if (!specifier.startsWith(".")) continue;
      const target = resolve(dirname(file), specifier);
      if (roots.some((root) => target === root || target.startsWith(`${root}/`)))
        offenders.push(`${relative(projectRoot, file)} → ${specifier}`);
    }
  }
  return offenders;
}

describe("layering", () => {
  it("finds an upward import in every form it can take", () => {
    const source = [
      'import type { Env } from "../../workers/env.ts";',
      'import { ingestEnvelope } from "../workers/ingest.ts";',
      'export { x } from "../workers/x.ts";',
      'const m = await import("../workers/y.ts");',
      "import {\n  a,\n  b,\n} from '../workers/z.ts';",
    ].join("\n");
    assert.deepEqual(specifiers(source), [
      "../../workers/env.ts",
      "../workers/ingest.ts",
      "../workers/x.ts",
      "../workers/z.ts",
      "../workers/y.ts",
    ]);
  });

  for (const layer of ["functions", "durable-objects"]) {
    it(`nothing under ${layer}/ imports from workers/`, () => {
      assert.deepEqual(upwardImports(layer), []);
    });
  }

  it("nothing under web/ imports from workers/, durable-objects/ or functions/", () => {
    assert.deepEqual(upwardImports("web", ["workers", "durable-objects", "functions"]), []);
  });
});
