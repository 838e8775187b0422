import * as z from "zod";
import type { AgentTool } from "../types.ts";
import { writeFile } from "../workspace.ts";
import { noteMemoryWrite } from "../memory/index-signal.ts";
import { dbEnvOf, parseToolArgs } from "./common.ts";
import { workspacePathFor } from "./private-memory.ts";

const writeArgs = z.object({ path: z.string().min(1), content: z.string() });

export function createWriteTool(): AgentTool {
  return {
    name: "write",
    description:
      "Create or overwrite a workspace file with the given content (the whole file). Use edit for a targeted change. Files are limited to 1 MiB.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "File path relative to the workspace root" },
        content: { type: "string", description: "The complete new content of the file" },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const args = parseToolArgs("write", writeArgs, rawArgs);
      const result = await writeFile(
        dbEnvOf(ctx),
        ctx.agentId,
        workspacePathFor(ctx, args.path),
        args.content,
      );
      await noteMemoryWrite(ctx.env, ctx.config, ctx.agentId, result.path);
      return {
        content: `${result.created ? "Created" : "Wrote"} ${result.path} (${result.bytes} bytes, version ${result.version}).`,
      };
    },
  };
}
