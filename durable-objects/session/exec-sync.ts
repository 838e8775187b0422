import type { DbEnv } from "../../functions/db/client.ts";
import type { SandboxConfig } from "../../functions/config/exec-schema.ts";
import {
  listFiles,
  readFile,
  readFiles,
  WorkspaceError,
  writeFile,
} from "../../functions/agent/workspace.ts";
import { commitWorkspaceChanges } from "../../functions/agent/workspace-batch.ts";
import { isPrivateMemoryPath } from "../../functions/agent/tools/private-memory.ts";
import type { FileChange, SyncFile } from "../../functions/sandbox/wire.ts";
import { SandboxError } from "../../functions/sandbox/backend.ts";

/**
 * The workspace's way into the sandbox and back (Postgres is the record). In: every file of the
 * agent's workspace (private memory only in the owner's private chat), bounded by
 * `agents.defaults.sandbox.sync.maxFiles` / `maxBytes` — over the bound the command is refused
 * before it starts, never run on a partial copy. Back (workspaceAccess "rw"): each change the
 * command made is committed conditional on the version it was synced in at.
 *
 * THE CONFLICT RULE: when `write`/`edit`/`apply_patch` changed a file after it was synced in and the
 * command changed it too (a background command runs while the agent keeps working), Postgres keeps
 * the tool's version and the command's version is saved beside it as `<path>.conflict`; the exec
 * result names both. Nothing is silently lost. A change already committed (a resumed run reading
 * the same result again) is recognised by its content and not written twice.
 */
export async function filesForSandbox(
  env: DbEnv,
  agentId: string,
  sandbox: SandboxConfig,
  mainPrivateSession: boolean,
): Promise<SyncFile[]> {
  const entries = (await listFiles(env, agentId)).filter(
    (entry) => mainPrivateSession || !isPrivateMemoryPath(entry.path),
  );
  const bytes = entries.reduce((sum, entry) => sum + entry.bytes, 0);
  if (entries.length > sandbox.sync.maxFiles || bytes > sandbox.sync.maxBytes)
    throw new SandboxError(
      "refused",
      `the workspace (${entries.length} files, ${bytes} bytes) is over the sandbox sync bounds (agents.defaults.sandbox.sync.maxFiles ${sandbox.sync.maxFiles}, maxBytes ${sandbox.sync.maxBytes}); raise them or remove files`,
    );
  const files = await readFiles(
    env,
    agentId,
    entries.map((entry) => entry.path),
  );
  return [...files.values()].map((file) => ({
    path: file.path,
    content: file.content,
    version: file.version,
  }));
}

export interface SyncBackResult {
  written: string[];
  conflicts: string[];
  skipped: string[];
}

export async function commitSandboxChanges(
  env: DbEnv,
  agentId: string,
  changes: readonly FileChange[],
  mainPrivateSession: boolean,
  conflictSuffix: string,
): Promise<SyncBackResult> {
  const result: SyncBackResult = { written: [], conflicts: [], skipped: [] };
  for (const change of changes) {
    if (!mainPrivateSession && isPrivateMemoryPath(change.path)) {
      result.skipped.push(`${change.path} (private memory: only in the owner's private chat)`);
      continue;
    }
    try {
      await commitWorkspaceChanges(env, agentId, [
        { path: change.path, content: change.content, expectedVersion: change.baseVersion },
      ]);
      result.written.push(change.content === null ? `${change.path} (deleted)` : change.path);
    } catch (error) {
      if (error instanceof WorkspaceError && error.code === "version_conflict") {
        const current = await readFile(env, agentId, change.path);
        if ((current?.content ?? null) === change.content) continue;
        if (change.content !== null) {
          const aside = `${change.path}.conflict${conflictSuffix}`;
          await writeFile(env, agentId, aside, change.content);
          result.conflicts.push(
            `${change.path} (changed by a tool meanwhile: kept; the command's version is in ${aside})`,
          );
        } else {
          result.conflicts.push(
            `${change.path} (deleted by the command, changed by a tool meanwhile: kept)`,
          );
        }
        continue;
      }
      if (error instanceof WorkspaceError) {
        result.skipped.push(`${change.path} (${error.message})`);
        continue;
      }
      throw error;
    }
  }
  return result;
}
