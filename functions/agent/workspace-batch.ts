import { and, eq, sql } from "drizzle-orm";
import { withDb, type DbEnv } from "../db/client.ts";
import { workspaceFiles } from "../db/schema.ts";
import { MAX_WORKSPACE_FILE_BYTES, utf8Bytes, WorkspaceError } from "./workspace.ts";

/**
 * Several workspace changes committed as one Postgres transaction, each conditional on the version
 * it was computed from: every change lands, or none does (apply_patch's all-or-nothing, and the
 * sandbox's sync back of what a command changed). A file changed by someone else since it was read
 * fails the whole batch with a version conflict naming it.
 */
export interface WorkspaceChange {
  path: string;
  /** null deletes the file. */
  content: string | null;
  /** The version the change was computed from; 0 = the file must not exist yet. */
  expectedVersion: number;
}

export interface CommittedChange {
  path: string;
  /** The file's version after the commit (0 once deleted). */
  version: number;
  deleted: boolean;
}

/** Thrown inside the transaction to roll it back; becomes the WorkspaceError the caller sees. */
class ConflictRollback extends Error {}

export async function commitWorkspaceChanges(
  env: DbEnv,
  agentId: string,
  changes: readonly WorkspaceChange[],
): Promise<CommittedChange[]> {
  for (const change of changes) {
    if (change.content === null) continue;
    const bytes = utf8Bytes(change.content);
    if (bytes > MAX_WORKSPACE_FILE_BYTES)
      throw new WorkspaceError(
        "too_large",
        `${change.path} would be ${bytes} bytes; a workspace file may hold at most ${MAX_WORKSPACE_FILE_BYTES} bytes (1 MiB)`,
      );
  }
  if (!changes.length) return [];
  try {
    return await withDb(env, (db) =>
      db.transaction(async (tx) => {
        const committed: CommittedChange[] = [];
        for (const change of changes) {
          const where = and(
            eq(workspaceFiles.agentId, agentId),
            eq(workspaceFiles.path, change.path),
            eq(workspaceFiles.version, change.expectedVersion),
          );
          let rows: Array<{ version: number }>;
          if (change.content === null) {
            rows = await tx
              .delete(workspaceFiles)
              .where(where)
              .returning({ version: workspaceFiles.version });
          } else if (change.expectedVersion === 0) {
            rows = await tx
              .insert(workspaceFiles)
              .values({ agentId, path: change.path, content: change.content, version: 1 })
              .onConflictDoNothing()
              .returning({ version: workspaceFiles.version });
          } else {
            rows = await tx
              .update(workspaceFiles)
              .set({
                content: change.content,
                version: sql`${workspaceFiles.version} + 1`,
                updatedAt: sql`now()`,
              })
              .where(where)
              .returning({ version: workspaceFiles.version });
          }
          if (!rows.length) throw new ConflictRollback(change.path);
          committed.push({
            path: change.path,
            version: change.content === null ? 0 : rows[0]!.version,
            deleted: change.content === null,
          });
        }
        return committed;
      }),
    );
  } catch (error) {
    if (error instanceof ConflictRollback)
      throw new WorkspaceError(
        "version_conflict",
        `${error.message} changed while the change was being prepared; nothing was written — read it again and retry`,
      );
    throw error;
  }
}
