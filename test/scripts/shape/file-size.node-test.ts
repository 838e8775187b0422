import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { projectRoot } from "../helpers.ts";
import { sourceFiles } from "./import-graph.ts";

/**
 * One job per file: a source file of the shipped code stays under MAX_LINES lines as biome formats
 * it (width 100, which `biome ci` enforces, so the file on disk is the formatted one). A file
 * that grows past it is split along its seams — routes per area, state, payload builders —
 * instead of raising the limit. Tests are not held to it (a suite of cases for one behaviour
 * reads best whole).
 */
const MAX_LINES = 400;

/** The shipped code: what the Worker, the Durable Objects, the companion and the CLI run. */
const ROOTS = ["functions", "workers", "durable-objects", "companion/src", "scripts"];

/**
 * Files allowed past MAX_LINES, each with its reason. Keep it short: a file is listed only when it
 * is generated, or when splitting it now would collide with work in progress (say which).
 */
const ALLOWED: Record<string, string> = {};

function lineCount(file: string): number {
  const text = readFileSync(join(projectRoot, file), "utf8");
  return text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
}

describe("file size", () => {
  it(`no shipped source file passes ${MAX_LINES} lines, but the allowed ones`, () => {
    const files = sourceFiles(ROOTS);
    assert.ok(files.length > 300, `read only ${files.length} files`);
    const over = files
      .filter((file) => !(file in ALLOWED))
      .map((file) => ({ file, lines: lineCount(file) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    assert.deepEqual(over, [], `split these by job (limit ${MAX_LINES} lines)`);
  });

  it("every allowed file still exists and is still over the limit", () => {
    // An entry whose file was split or removed is a stale exception: it would let a new file of
    // that name grow unchecked.
    const files = new Set(sourceFiles(ROOTS));
    const stale = Object.keys(ALLOWED).filter(
      (file) => !files.has(file) || lineCount(file) <= MAX_LINES,
    );
    assert.deepEqual(stale, []);
  });
});
