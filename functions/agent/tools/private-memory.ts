import type { ToolContext } from "../types.ts";
import { normalizeWorkspacePath } from "../workspace.ts";
import { ToolInputError } from "./common.ts";

/** What the file tools answer when a run outside the owner's private chat names private memory. */
export const PRIVATE_MEMORY_REFUSAL =
  "private memory is only available in the owner's private chat";

/**
 * MEMORY.md (or memory.md) and everything under memory/ are the owner's private memory. Compared
 * case-insensitively on the normalised path, so `./MEMORY.md`, `Memory/x.md` or `memory\x.md` all
 * count: whatever spelling the model tries, none of these files reaches a group or a stranger.
 */
export function isPrivateMemoryPath(normalizedPath: string): boolean {
  const lower = normalizedPath.toLowerCase();
  return lower === "memory.md" || lower === "memory" || lower.startsWith("memory/");
}

/**
 * The workspace path a file tool may use in this run. Outside the main private session (groups,
 * channels, other senders' DMs, unknown chat types) private memory is refused, the same rule that
 * keeps MEMORY.md out of the system prompt there; a path the workspace rejects (`..`, absolute)
 * throws its own error first.
 */
export function workspacePathFor(ctx: ToolContext, rawPath: string): string {
  const path = normalizeWorkspacePath(rawPath);
  if (!ctx.mainPrivateSession && isPrivateMemoryPath(path))
    throw new ToolInputError(`${path}: ${PRIVATE_MEMORY_REFUSAL}`);
  return path;
}
