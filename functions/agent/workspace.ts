import { and, asc, eq, inArray, like, sql } from "drizzle-orm";
import { withDb, type DbEnv } from "../db/client.ts";
import { workspaceFiles } from "../db/schema.ts";
import { EdgeclawError } from "../core/errors.ts";

/**
 * The agent's workspace ("disk") on Postgres: one row per file, keyed by (agent, path), with a
 * version that every write bumps. Tools and the prompt loader go through these functions only, so
 * path rules, size bounds and optimistic concurrency hold everywhere.
 */

/** Upper bound on one file, in UTF-8 bytes. */
export const MAX_WORKSPACE_FILE_BYTES = 1024 * 1024;
const MAX_PATH_CHARS = 512;
const MAX_LIST_ENTRIES = 1000;

export type WorkspaceErrorCode =
  | "invalid_path"
  | "too_large"
  | "not_found"
  | "version_conflict"
  | "no_match"
  | "ambiguous_match";

/**
 * A workspace operation refused for a reason the caller (often the model) can act on. A version
 * conflict is transient (another writer got there first: read again and retry); the rest fail the
 * same way every time.
 */
export class WorkspaceError extends EdgeclawError {
  constructor(
    readonly code: WorkspaceErrorCode,
    message: string,
  ) {
    super(code === "version_conflict" ? "transient" : "permanent", message);
  }
}

export interface WorkspaceFile {
  path: string;
  content: string;
  version: number;
  updatedAt: Date;
}

export interface WorkspaceEntry {
  path: string;
  version: number;
  bytes: number;
  updatedAt: Date;
}

/**
 * Normalises a workspace path to its canonical relative form (`memory/2026-01-01.md`). Separators
 * are unified and `.` segments dropped; absolute paths, `..`, control characters and directory-like
 * paths are refused, because the workspace is the only root a tool may touch.
 */
export function normalizeWorkspacePath(input: string): string {
  if (typeof input !== "string" || input.trim() === "") {
    throw new WorkspaceError(
      "invalid_path",
      "path is empty: give a file path relative to the workspace root, e.g. MEMORY.md",
    );
  }
  const raw = input.trim().replace(/\\/g, "/");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) {
    throw new WorkspaceError("invalid_path", "path contains control characters");
  }
  if (raw.startsWith("/") || /^[a-zA-Z]:/.test(raw) || raw.startsWith("~")) {
    throw new WorkspaceError(
      "invalid_path",
      `path "${input}" is absolute: workspace paths are relative to the workspace root (e.g. "AGENTS.md", "memory/today.md")`,
    );
  }
  if (raw.endsWith("/")) {
    throw new WorkspaceError("invalid_path", `path "${input}" names a directory, not a file`);
  }
  const segments: string[] = [];
  for (const segment of raw.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      throw new WorkspaceError(
        "invalid_path",
        `path "${input}" contains "..": paths must stay inside the workspace`,
      );
    }
    segments.push(segment);
  }
  const path = segments.join("/");
  if (path === "") throw new WorkspaceError("invalid_path", `path "${input}" does not name a file`);
  if (path.length > MAX_PATH_CHARS) {
    throw new WorkspaceError("invalid_path", `path is longer than ${MAX_PATH_CHARS} characters`);
  }
  return path;
}

export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

export function assertContentSize(path: string, content: string): void {
  const bytes = utf8Bytes(content);
  if (bytes > MAX_WORKSPACE_FILE_BYTES) {
    throw new WorkspaceError(
      "too_large",
      `${path} would be ${bytes} bytes; a workspace file may hold at most ${MAX_WORKSPACE_FILE_BYTES} bytes (1 MiB)`,
    );
  }
}

export async function readFile(
  env: DbEnv,
  agentId: string,
  path: string,
): Promise<WorkspaceFile | null> {
  const normalized = normalizeWorkspacePath(path);
  return (await readFiles(env, agentId, [normalized])).get(normalized) ?? null;
}

/** Reads several files in one round trip; paths that do not exist are simply absent from the map. */
export async function readFiles(
  env: DbEnv,
  agentId: string,
  paths: readonly string[],
): Promise<Map<string, WorkspaceFile>> {
  const normalized = paths.map(normalizeWorkspacePath);
  const found = new Map<string, WorkspaceFile>();
  if (normalized.length === 0) return found;
  const rows = await withDb(env, (db) =>
    db
      .select({
        path: workspaceFiles.path,
        content: workspaceFiles.content,
        version: workspaceFiles.version,
        updatedAt: workspaceFiles.updatedAt,
      })
      .from(workspaceFiles)
      .where(and(eq(workspaceFiles.agentId, agentId), inArray(workspaceFiles.path, normalized))),
  );
  for (const row of rows) found.set(row.path, row);
  return found;
}

export interface WriteOptions {
  /**
   * Optimistic concurrency: the version the caller last saw. `0` means "the file must not exist
   * yet"; omitted means an unconditional write (create or overwrite).
   */
  expectedVersion?: number;
}

export interface WriteResult {
  path: string;
  version: number;
  bytes: number;
  created: boolean;
}

export async function writeFile(
  env: DbEnv,
  agentId: string,
  path: string,
  content: string,
  options: WriteOptions = {},
): Promise<WriteResult> {
  const normalized = normalizeWorkspacePath(path);
  assertContentSize(normalized, content);
  const bytes = utf8Bytes(content);
  const expected = options.expectedVersion;
  if (expected !== undefined && (!Number.isInteger(expected) || expected < 0)) {
    throw new WorkspaceError(
      "version_conflict",
      `expected version must be a non-negative integer, got ${expected}`,
    );
  }

  return withDb(env, async (db) => {
    if (expected === undefined) {
      const rows = await db
        .insert(workspaceFiles)
        .values({ agentId, path: normalized, content, version: 1 })
        .onConflictDoUpdate({
          target: [workspaceFiles.agentId, workspaceFiles.path],
          set: { content, version: sql`${workspaceFiles.version} + 1`, updatedAt: sql`now()` },
        })
        .returning({ version: workspaceFiles.version });
      const version = rows[0]?.version ?? 1;
      return { path: normalized, version, bytes, created: version === 1 };
    }

    if (expected === 0) {
      const rows = await db
        .insert(workspaceFiles)
        .values({ agentId, path: normalized, content, version: 1 })
        .onConflictDoNothing()
        .returning({ version: workspaceFiles.version });
      if (rows.length === 0) {
        throw new WorkspaceError(
          "version_conflict",
          `${normalized} already exists; read it first and write with its current version`,
        );
      }
      return { path: normalized, version: 1, bytes, created: true };
    }

    const rows = await db
      .update(workspaceFiles)
      .set({ content, version: sql`${workspaceFiles.version} + 1`, updatedAt: sql`now()` })
      .where(
        and(
          eq(workspaceFiles.agentId, agentId),
          eq(workspaceFiles.path, normalized),
          eq(workspaceFiles.version, expected),
        ),
      )
      .returning({ version: workspaceFiles.version });
    const row = rows[0];
    if (row) return { path: normalized, version: row.version, bytes, created: false };

    const current = await db
      .select({ version: workspaceFiles.version })
      .from(workspaceFiles)
      .where(and(eq(workspaceFiles.agentId, agentId), eq(workspaceFiles.path, normalized)));
    const now = current[0]?.version;
    throw new WorkspaceError(
      "version_conflict",
      now === undefined
        ? `${normalized} no longer exists (expected version ${expected})`
        : `${normalized} changed since it was read: expected version ${expected}, current version ${now}; read it again`,
    );
  });
}

export interface EditResult extends WriteResult {
  /** Character offset where the replacement starts, for a caller that wants to show context. */
  offset: number;
}

/**
 * Replaces exactly one occurrence of `oldText`. Zero or several matches are refused, because the
 * model asked for a specific change and a guess at which occurrence it meant corrupts the file.
 * The write is conditional on the version that was read, so a concurrent edit is never lost.
 */
export async function editFile(
  env: DbEnv,
  agentId: string,
  path: string,
  oldText: string,
  newText: string,
  options: WriteOptions = {},
): Promise<EditResult> {
  const normalized = normalizeWorkspacePath(path);
  if (oldText === "") {
    throw new WorkspaceError(
      "no_match",
      "oldText is empty: give the exact text to replace (use write to create a file)",
    );
  }
  const file = await readFile(env, agentId, normalized);
  if (!file) throw new WorkspaceError("not_found", `${normalized} does not exist in the workspace`);
  if (options.expectedVersion !== undefined && options.expectedVersion !== file.version) {
    throw new WorkspaceError(
      "version_conflict",
      `${normalized} changed since it was read: expected version ${options.expectedVersion}, current version ${file.version}; read it again`,
    );
  }
  const first = file.content.indexOf(oldText);
  if (first === -1) {
    throw new WorkspaceError(
      "no_match",
      `oldText was not found in ${normalized}; it must match the file exactly, including whitespace and line breaks`,
    );
  }
  const occurrences = countOccurrences(file.content, oldText);
  if (occurrences > 1) {
    throw new WorkspaceError(
      "ambiguous_match",
      `oldText occurs ${occurrences} times in ${normalized}; include more surrounding text so it matches exactly once`,
    );
  }
  const content =
    file.content.slice(0, first) + newText + file.content.slice(first + oldText.length);
  const written = await writeFile(env, agentId, normalized, content, {
    expectedVersion: file.version,
  });
  return { ...written, offset: first };
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) count++;
  return count;
}

export async function deleteFile(env: DbEnv, agentId: string, path: string): Promise<boolean> {
  const normalized = normalizeWorkspacePath(path);
  const rows = await withDb(env, (db) =>
    db
      .delete(workspaceFiles)
      .where(and(eq(workspaceFiles.agentId, agentId), eq(workspaceFiles.path, normalized)))
      .returning({ path: workspaceFiles.path }),
  );
  return rows.length > 0;
}

export interface ListOptions {
  /** Only paths under this folder (`memory` or `memory/`). */
  dir?: string;
  limit?: number;
}

/** Files in path order, without their content; at most `limit` (≤ 1000) entries. */
export async function listFiles(
  env: DbEnv,
  agentId: string,
  options: ListOptions = {},
): Promise<WorkspaceEntry[]> {
  const limit = Math.min(Math.max(1, options.limit ?? MAX_LIST_ENTRIES), MAX_LIST_ENTRIES);
  const dir =
    options.dir === undefined || options.dir.trim() === "" || options.dir.trim() === "."
      ? undefined
      : normalizeWorkspacePath(options.dir.replace(/\/+$/, ""));
  const prefixFilter =
    dir === undefined ? undefined : like(workspaceFiles.path, `${escapeLike(dir)}/%`);
  return withDb(env, (db) =>
    db
      .select({
        path: workspaceFiles.path,
        version: workspaceFiles.version,
        bytes: sql<number>`octet_length(${workspaceFiles.content})::int`,
        updatedAt: workspaceFiles.updatedAt,
      })
      .from(workspaceFiles)
      .where(
        prefixFilter
          ? and(eq(workspaceFiles.agentId, agentId), prefixFilter)
          : eq(workspaceFiles.agentId, agentId),
      )
      .orderBy(asc(workspaceFiles.path))
      .limit(limit),
  );
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}
