import { and, eq, or, like, sql } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { workspaceFiles } from "../../db/schema.ts";
import type { MemorySearchConfig } from "../../config/memory-keys.ts";
import { isPrivateMemoryPath } from "../tools/private-memory.ts";
import { normalizeWorkspacePath } from "../workspace.ts";

/**
 * Which workspace files are memory: MEMORY.md, USER.md, memory/**.md, and `memory.search.extraPaths`
 * (a file, a folder, or a folder with a `*` pattern). Only markdown is indexed.
 */

export const ROOT_MEMORY_FILES = ["MEMORY.md", "USER.md"] as const;

interface ExtraPath {
  base: string;
  pattern?: RegExp;
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split("**")
    .map((part) =>
      part
        .split("*")
        .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]*"),
    )
    .join(".*");
  return new RegExp(`^${body}$`, "i");
}

function extraPaths(search: MemorySearchConfig): ExtraPath[] {
  const out: ExtraPath[] = [];
  for (const entry of search.extraPaths) {
    try {
      if (typeof entry === "string")
        out.push({ base: normalizeWorkspacePath(entry.replace(/\/+$/, "")) });
      else
        out.push({
          base: normalizeWorkspacePath(entry.path.replace(/\/+$/, "")),
          pattern: entry.pattern ? globToRegExp(entry.pattern) : undefined,
        });
    } catch {
      // A path outside the workspace (absolute, `..`) names nothing this gateway stores.
    }
  }
  return out;
}

/** Whether a (normalised) workspace path is indexed for memory search. */
export function isMemorySourcePath(search: MemorySearchConfig, path: string): boolean {
  if (!path.toLowerCase().endsWith(".md")) return false;
  if ((ROOT_MEMORY_FILES as readonly string[]).includes(path)) return true;
  if (path.startsWith("memory/")) return true;
  return extraPaths(search).some(({ base, pattern }) => {
    if (path === base) return true;
    if (!path.startsWith(`${base}/`)) return false;
    return pattern ? pattern.test(path.slice(base.length + 1)) : true;
  });
}

export function isPrivateSource(path: string): boolean {
  return isPrivateMemoryPath(path);
}

export interface SourceFile {
  path: string;
  version: number;
  updatedAt: Date;
}

/** The agent's memory source files as the workspace holds them now (no content: a cheap query). */
export async function listSourceFiles(
  db: Db,
  search: MemorySearchConfig,
  agentId: string,
): Promise<SourceFile[]> {
  const prefixes = [...new Set(["memory", ...extraPaths(search).map((extra) => extra.base)])];
  const rows = await db
    .select({
      path: workspaceFiles.path,
      version: workspaceFiles.version,
      updatedAt: workspaceFiles.updatedAt,
    })
    .from(workspaceFiles)
    .where(
      and(
        eq(workspaceFiles.agentId, agentId),
        or(
          sql`${workspaceFiles.path} in ('MEMORY.md', 'USER.md')`,
          ...prefixes.map((prefix) =>
            like(workspaceFiles.path, `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`),
          ),
          ...prefixes.map((prefix) => eq(workspaceFiles.path, prefix)),
        ),
      ),
    );
  return rows.filter((row) => isMemorySourcePath(search, row.path));
}
