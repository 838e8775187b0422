import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import { isMemorySourcePath } from "../memory/sources.ts";
import { readFile } from "../workspace.ts";
import { dbEnvOf, parseToolArgs, ToolInputError } from "./common.ts";
import { workspacePathFor } from "./private-memory.ts";

/** Lines memory_get returns when the call names no window (OpenClaw's built-in 120). */
export const MEMORY_GET_DEFAULT_LINES = 120;

const getArgs = z.object({
  path: z.string().min(1),
  from: z.number().int().min(1).optional(),
  lines: z.number().int().min(1).max(2000).optional(),
});

/**
 * memory_get: a window of lines from one memory file (a memory_search hit, or a note by name), cut
 * at `agents.defaults.contextLimits.memoryGetMaxChars`. Only memory files, and private memory only
 * in the owner's main private session.
 */
export function createMemoryGetTool(config: EdgeclawConfig): AgentTool | null {
  if (!config.memory.search.enabled) return null;
  return {
    name: "memory_get",
    description: `Read lines from a memory file (MEMORY.md, USER.md, memory/*.md), e.g. around a memory_search hit. Default window ${MEMORY_GET_DEFAULT_LINES} lines from line 1.`,
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "Memory file path, e.g. memory/2026-01-31.md" },
        from: { type: "integer", minimum: 1, description: "First line (1-based)" },
        lines: {
          type: "integer",
          minimum: 1,
          description: `How many lines (default ${MEMORY_GET_DEFAULT_LINES})`,
        },
      },
      required: ["path"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("memory_get", getArgs, rawArgs);
      const path = workspacePathFor(ctx, args.path.replace(/#L\d+(-L?\d+)?$/i, ""));
      if (!isMemorySourcePath(ctx.config.memory.search, path))
        throw new ToolInputError(
          `${path} is not a memory file; memory_get reads MEMORY.md, USER.md and memory/*.md (use read for other files)`,
        );
      const file = await readFile(dbEnvOf(ctx), ctx.agentId, path);
      if (!file) return { content: `Memory file not found: ${path}.`, isError: true };
      const all = file.content.split("\n");
      const from = args.from ?? 1;
      if (from > all.length)
        return { content: `${path} has ${all.length} lines; from=${from} is past the end.` };
      const maxChars = ctx.config.agents.defaults.contextLimits.memoryGetMaxChars;
      const wanted = all.slice(from - 1, from - 1 + (args.lines ?? MEMORY_GET_DEFAULT_LINES));
      let text = wanted.join("\n");
      let last = from - 1 + wanted.length;
      const cutByChars = text.length > maxChars;
      if (cutByChars) {
        text = text.slice(0, maxChars);
        last = from + (text.match(/\n/g)?.length ?? 0); // this line is cut: the next call starts on it again
      }
      const next = cutByChars ? last : last + 1;
      const more = next <= all.length ? ` More: memory_get with from=${next}.` : "";
      const cut = cutByChars
        ? ` Cut at ${maxChars} characters (agents.defaults.contextLimits.memoryGetMaxChars).`
        : "";
      return {
        content: `${text}\n\n[${path}: lines ${from}-${last} of ${all.length}.${cut}${more}]`,
      };
    },
  };
}
