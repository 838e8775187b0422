import type { ExportRequest } from "../../functions/commands/session-control.ts";
import { exportFormatOf, renderExport } from "../../functions/commands/export-render.ts";
import { isMainPrivateSession } from "../../functions/agent/private-session.ts";
import {
  isPrivateMemoryPath,
  PRIVATE_MEMORY_REFUSAL,
} from "../../functions/agent/tools/private-memory.ts";
import {
  normalizeWorkspacePath,
  readFile,
  WorkspaceError,
  writeFile,
} from "../../functions/agent/workspace.ts";
import type { ChatType } from "../../functions/core/envelope.ts";
import { currentSessionId } from "./lifecycle.ts";
import type { SessionState } from "./state.ts";

/**
 * `/export-session [path]`: the current session's transcript written into the agent's workspace
 * (Postgres), as Markdown, JSON or HTML by the path's extension. The owner's private chat may hold
 * private memory, so its exports stay under memory/ (which no group or stranger's run can read);
 * any other session's exports stay out of memory/, as its file tools do. Without a path the file
 * name is new; an explicit path replaces what is there.
 */
const MAX_EXPORTED_MESSAGES = 10_000;

export async function exportSession(s: SessionState, request: ExportRequest): Promise<string> {
  const now = Date.now();
  const chatType = s.store.meta.get("chatType") as ChatType | undefined;
  const privateChat = isMainPrivateSession({ chatType, senderIsOwner: request.senderIsOwner });
  const sessionId = currentSessionId(s, now);
  const rows = s.store.transcript.ofSession(sessionId, MAX_EXPORTED_MESSAGES);
  if (rows.length === 0) return "Nothing to export: this session has no messages yet.";

  let path: string;
  try {
    path = request.path
      ? normalizeWorkspacePath(request.path)
      : await freshPath(s, request.agentId, privateChat, sessionId, now);
  } catch (error) {
    return `Not exported: ${error instanceof Error ? error.message : String(error)}`;
  }
  const format = exportFormatOf(path);
  if (!format) return `Not exported: ${path} should end in .md, .json or .html.`;
  if (privateChat && !isPrivateMemoryPath(path))
    return `Not exported: this is the owner's private chat, which may hold private memory; export it under memory/ (e.g. memory/exports/${path.split("/").at(-1)}).`;
  if (!privateChat && isPrivateMemoryPath(path))
    return `Not exported: ${path}: ${PRIVATE_MEMORY_REFUSAL}.`;

  const content = renderExport(
    format,
    {
      sessionKey: s.store.meta.get("sessionKey") ?? "",
      sessionId,
      agentId: request.agentId,
      exportedAt: now,
    },
    rows.map((row) => ({ message: row.message, at: row.createdAt })),
  );
  try {
    await writeFile(s.env, request.agentId, path, content);
  } catch (error) {
    if (error instanceof WorkspaceError) return `Not exported: ${error.message}.`;
    throw error;
  }
  const kib = (new TextEncoder().encode(content).length / 1024).toFixed(1);
  return `📄 Exported ${rows.length} message${rows.length === 1 ? "" : "s"} to ${path} (${kib} KiB, ${format}).`;
}

/** `exports/session-20261202-1402-<id>.md` (under memory/ for the private chat), numbered if taken. */
async function freshPath(
  s: SessionState,
  agentId: string,
  privateChat: boolean,
  sessionId: string,
  now: number,
): Promise<string> {
  const stamp = new Date(now).toISOString().slice(0, 16).replace(/[-:]/g, "").replace("T", "-");
  const base = `${privateChat ? "memory/exports" : "exports"}/session-${stamp}-${sessionId.slice(0, 8)}`;
  for (let n = 1; ; n++) {
    const path = `${base}${n === 1 ? "" : `-${n}`}.md`;
    if (!(await readFile(s.env, agentId, path))) return path;
  }
}
