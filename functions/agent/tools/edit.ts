import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { editFile } from "../workspace.ts";
import { noteMemoryWrite } from "../memory/index-signal.ts";
import { ToolInputError, dbEnvOf, parseToolArgs } from "./common.ts";
import { workspacePathFor } from "./private-memory.ts";

// Models trained on other harnesses send old_string/new_string; both spellings are accepted.
const editArgs = z
  .object({
    path: z.string().min(1),
    oldText: z.string().optional(),
    newText: z.string().optional(),
    old_string: z.string().optional(),
    new_string: z.string().optional(),
  })
  .transform((args) => ({
    path: args.path,
    oldText: args.oldText ?? args.old_string,
    newText: args.newText ?? args.new_string,
  }));

export function createEditTool(): AgentTool {
  return {
    name: "edit",
    description:
      "Replace one exact piece of text in a workspace file. oldText must match the file exactly (whitespace included) and occur exactly once; add surrounding lines to make it unique.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path relative to the workspace root" },
        oldText: { type: "string", description: "Exact text to replace (must occur once)" },
        newText: { type: "string", description: "Replacement text" },
      },
      required: ["path", "oldText", "newText"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("edit", editArgs, rawArgs);
      if (args.oldText === undefined || args.newText === undefined) {
        throw new ToolInputError("edit: oldText and newText are required");
      }
      const result = await editFile(
        dbEnvOf(ctx),
        ctx.agentId,
        workspacePathFor(ctx, args.path),
        args.oldText,
        args.newText,
      );
      await noteMemoryWrite(ctx.env, ctx.config, ctx.agentId, result.path);
      return {
        content: `Edited ${result.path} (version ${result.version}, ${result.bytes} bytes).`,
      };
    },
  };
}
