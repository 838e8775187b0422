import * as z from "zod";
import type { AgentTool, ToolContext } from "../types.ts";
import { listFiles, readFile } from "../workspace.ts";
import { dbEnvOf, parseToolArgs } from "./common.ts";
import { isPrivateMemoryPath, workspacePathFor } from "./private-memory.ts";

/** Lines and characters one `read` returns at most; the model pages with `offset` for more. */
export const READ_MAX_LINES = 2000;
export const READ_MAX_CHARS = 50_000;

const readArgs = z.object({
  path: z.string().min(1),
  offset: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).optional(),
});

const ROOT_PATHS = new Set(["", ".", "./", "/"]);

export function createReadTool(): AgentTool {
  return {
    name: "read",
    description:
      'Read a text file from the workspace. Paths are relative to the workspace root. Long files come back in pages: pass offset (1-based line) and limit (lines) to read more. Reading a folder (or ".") lists its files.',
    parameters: {
      type: "object",
      properties: {
        path: {
          type: "string",
          description: "File path relative to the workspace root, e.g. MEMORY.md",
        },
        offset: { type: "integer", minimum: 1, description: "First line to return (1-based)" },
        limit: {
          type: "integer",
          minimum: 1,
          description: `Number of lines to return (at most ${READ_MAX_LINES})`,
        },
      },
      required: ["path"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("read", readArgs, rawArgs);
      const env = dbEnvOf(ctx);
      const trimmed = args.path.trim();
      if (ROOT_PATHS.has(trimmed)) return { content: await folderListing(env, ctx, undefined) };
      const path = workspacePathFor(ctx, trimmed.replace(/\/+$/, ""));
      const file = await readFile(env, ctx.agentId, path);
      if (!file) {
        const listing = await folderListing(env, ctx, path);
        if (listing) return { content: listing };
        return {
          content: `File not found: ${path}. Read "." to list the workspace.`,
          isError: true,
        };
      }
      return { content: pageOf(file.path, file.content, args.offset ?? 1, args.limit) };
    },
  };
}

async function folderListing(
  env: ReturnType<typeof dbEnvOf>,
  ctx: ToolContext,
  dir: string | undefined,
): Promise<string> {
  // Outside the owner's private chat even the names of private memory files stay hidden.
  const entries = (await listFiles(env, ctx.agentId, { dir })).filter(
    (entry) => ctx.mainPrivateSession || !isPrivateMemoryPath(entry.path),
  );
  if (entries.length === 0) return dir === undefined ? "The workspace is empty." : "";
  const header = dir === undefined ? "Workspace files:" : `Files under ${dir}/:`;
  return [header, ...entries.map((entry) => `${entry.path} (${entry.bytes} bytes)`)].join("\n");
}

function pageOf(path: string, content: string, offset: number, limit: number | undefined): string {
  if (content === "") return `(${path} is empty)`;
  const lines = content.split("\n");
  if (offset > lines.length)
    return `${path} has ${lines.length} lines; offset ${offset} is past the end.`;
  const maxLines = Math.min(limit ?? READ_MAX_LINES, READ_MAX_LINES);
  const start = offset - 1;
  const picked: string[] = [];
  let chars = 0;
  for (let i = start; i < lines.length && picked.length < maxLines; i++) {
    const line = lines[i] ?? "";
    if (chars + line.length + 1 > READ_MAX_CHARS) {
      if (picked.length === 0) picked.push(line.slice(0, READ_MAX_CHARS));
      break;
    }
    picked.push(line);
    chars += line.length + 1;
  }
  const end = start + picked.length;
  const body = picked.join("\n");
  if (start === 0 && end >= lines.length && body.length === content.length) return body;
  const next = end < lines.length ? ` Call read with offset=${end + 1} to continue.` : "";
  return `${body}\n\n[${path}: showing lines ${offset}-${end} of ${lines.length}.${next}]`;
}
