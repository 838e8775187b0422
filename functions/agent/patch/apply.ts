import { PermanentError } from "../../core/errors.ts";
import { PatchFormatError, type PatchHunk, type PatchOperation } from "./parse.ts";

/**
 * Applies parsed patch operations to a snapshot of the files they name, in memory: either every
 * operation applies and the result is the list of writes and deletes to commit (each with the
 * version it was computed from, so the commit refuses files changed meanwhile), or the first that
 * does not apply throws and nothing is committed.
 */

export interface SnapshotFile {
  content: string;
  version: number;
}

export interface PatchChange {
  path: string;
  /** null: delete the file. */
  content: string | null;
  /** Version the change was computed from (0: the file must not exist). */
  expectedVersion: number;
}

/** The patch does not fit the files as they are: the model must write it again. */
export class PatchApplyError extends PermanentError {}

export function applyOperations(
  operations: readonly PatchOperation[],
  snapshot: ReadonlyMap<string, SnapshotFile>,
  normalize: (path: string) => string,
): PatchChange[] {
  // The state as the patch goes: a path deleted earlier in the patch may be added again later.
  const current = new Map<string, { content: string | null; expectedVersion: number }>();
  const state = (path: string) => {
    const known = current.get(path);
    if (known) return known;
    const file = snapshot.get(path);
    return { content: file?.content ?? null, expectedVersion: file?.version ?? 0 };
  };
  const set = (path: string, content: string | null) =>
    current.set(path, { content, expectedVersion: state(path).expectedVersion });

  for (const operation of operations) {
    const path = normalize(operation.path);
    if (operation.kind === "add") {
      if (state(path).content !== null)
        throw new PatchApplyError(
          `Add File ${path}: the file already exists (delete it first in the same patch to replace it)`,
        );
      set(path, operation.content);
    } else if (operation.kind === "delete") {
      if (state(path).content === null)
        throw new PatchApplyError(`Delete File ${path}: the file does not exist`);
      set(path, null);
    } else {
      const before = state(path).content;
      if (before === null)
        throw new PatchApplyError(`Update File ${path}: the file does not exist`);
      const after = applyHunks(path, before, operation.hunks);
      const target = operation.moveTo ? normalize(operation.moveTo) : path;
      if (target !== path) {
        if (state(target).content !== null)
          throw new PatchApplyError(
            `Move to ${target}: the file already exists (delete it first in the same patch to replace it)`,
          );
        set(path, null);
      }
      set(target, after);
    }
  }
  const changes: PatchChange[] = [];
  for (const [path, next] of current) {
    const original = snapshot.get(path)?.content ?? null;
    if (next.content === original) continue;
    changes.push({ path, content: next.content, expectedVersion: next.expectedVersion });
  }
  return changes;
}

function applyHunks(path: string, content: string, hunks: readonly PatchHunk[]): string {
  const lines = content.endsWith("\n") ? content.slice(0, -1).split("\n") : content.split("\n");
  if (content === "") lines.length = 0;
  let cursor = 0;
  for (const [index, hunk] of hunks.entries()) {
    const where = `Update File ${path}, hunk ${index + 1}`;
    if (hunk.context) {
      const found = findLine(lines, hunk.context, cursor);
      if (found < 0)
        throw new PatchApplyError(`${where}: the context line "@@ ${hunk.context}" was not found`);
      cursor = found + 1;
    }
    let start: number;
    if (!hunk.oldLines.length) {
      start = hunk.atEnd || !hunk.context ? lines.length : cursor;
    } else {
      start = hunk.atEnd
        ? matchAtEnd(lines, hunk.oldLines)
        : findBlock(lines, hunk.oldLines, cursor);
      if (start < 0)
        throw new PatchApplyError(
          `${where}: these lines were not found${hunk.atEnd ? " at the end of the file" : ""}:\n${hunk.oldLines.join("\n")}`,
        );
    }
    lines.splice(start, hunk.oldLines.length, ...hunk.newLines);
    cursor = start + hunk.newLines.length;
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

// Exact first, then ignoring trailing whitespace, then ignoring surrounding whitespace: models
// often get indentation of blank-ish lines wrong, never the words.
const COMPARES: ReadonlyArray<(a: string, b: string) => boolean> = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
];

function findLine(lines: readonly string[], wanted: string, from: number): number {
  for (const same of COMPARES)
    for (let i = from; i < lines.length; i++) if (same(lines[i]!, wanted)) return i;
  return -1;
}

function findBlock(lines: readonly string[], block: readonly string[], from: number): number {
  for (const same of COMPARES)
    for (let i = from; i + block.length <= lines.length; i++)
      if (block.every((line, j) => same(lines[i + j]!, line))) return i;
  return -1;
}

function matchAtEnd(lines: readonly string[], block: readonly string[]): number {
  const start = lines.length - block.length;
  if (start < 0) return -1;
  for (const same of COMPARES)
    if (block.every((line, j) => same(lines[start + j]!, line))) return start;
  return -1;
}

export { PatchFormatError };
