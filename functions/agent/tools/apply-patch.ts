import * as z from "zod";
import type { EdgeclawConfig } from "../../config/schema.ts";
import type { AgentTool } from "../types.ts";
import { readFiles } from "../workspace.ts";
import { commitWorkspaceChanges } from "../workspace-batch.ts";
import { noteMemoryWrite } from "../memory/index-signal.ts";
import { parsePatch, PatchFormatError, type PatchOperation } from "../patch/parse.ts";
import { applyOperations, PatchApplyError } from "../patch/apply.ts";
import { dbEnvOf, parseToolArgs, ToolInputError } from "./common.ts";
import { workspacePathFor } from "./private-memory.ts";

/**
 * `apply_patch` (tools__apply-patch.md): several files changed in one call with OpenClaw's patch
 * format, on the workspace itself (no sandbox needed). All or nothing: the patch is parsed and
 * applied in memory first, then committed in one transaction conditional on the versions read, so a
 * bad patch — or a file changed meanwhile — changes nothing. `tools.exec.applyPatch.enabled: false`
 * removes it; `allowModels` keeps it to the listed models.
 */
const argsSchema = z.object({ input: z.string().min(1) });

export function createApplyPatchTool(
  config: EdgeclawConfig,
  modelRef: string | undefined,
): AgentTool | null {
  const settings = config.tools.exec.applyPatch;
  if (!settings.enabled) return null;
  if (settings.allowModels && !modelAllowed(settings.allowModels, modelRef)) return null;
  return {
    name: "apply_patch",
    description: [
      "Apply a patch to workspace files (several files and hunks in one call; all or nothing).",
      "input holds the whole patch: *** Begin Patch, then per file *** Add File: <path> (lines start with +),",
      "*** Update File: <path> (optional *** Move to: <path>, then @@ hunks of ' ' context, '-' removed, '+' added lines; *** End of File anchors a hunk at the end),",
      "or *** Delete File: <path>; then *** End Patch. Paths are relative to the workspace.",
    ].join(" "),
    parameters: {
      type: "object",
      properties: {
        input: {
          type: "string",
          description: "The full patch, including *** Begin Patch and *** End Patch",
        },
      },
      required: ["input"],
      additionalProperties: false,
    },
    async execute(rawArgs, ctx) {
      const { input } = parseToolArgs("apply_patch", argsSchema, rawArgs);
      let operations: PatchOperation[];
      try {
        operations = parsePatch(input);
      } catch (error) {
        if (error instanceof PatchFormatError)
          throw new ToolInputError(`apply_patch: ${error.message}; nothing was changed`);
        throw error;
      }
      const normalize = (path: string) => workspacePathFor(ctx, path);
      const paths = operations.flatMap((op) => [
        normalize(op.path),
        ...(op.kind === "update" && op.moveTo ? [normalize(op.moveTo)] : []),
      ]);
      const env = dbEnvOf(ctx);
      const snapshot = await readFiles(env, ctx.agentId, paths);
      let changes;
      try {
        changes = applyOperations(operations, snapshot, normalize);
      } catch (error) {
        if (error instanceof PatchApplyError)
          throw new ToolInputError(`apply_patch: ${error.message}; nothing was changed`);
        throw error;
      }
      const committed = await commitWorkspaceChanges(env, ctx.agentId, changes);
      for (const change of committed)
        await noteMemoryWrite(ctx.env, ctx.config, ctx.agentId, change.path);
      const lines = committed.map((change) =>
        change.deleted ? `D ${change.path}` : `${change.version === 1 ? "A" : "M"} ${change.path}`,
      );
      return {
        content: lines.length
          ? `Patch applied:\n${lines.join("\n")}`
          : "Patch applied: no file changed.",
      };
    },
  };
}

/** `gpt-5.4` matches `openai/gpt-5.4`; a full ref matches itself. */
function modelAllowed(allow: readonly string[], modelRef: string | undefined): boolean {
  if (!modelRef) return false;
  const bare = modelRef.includes("/") ? modelRef.slice(modelRef.indexOf("/") + 1) : modelRef;
  return allow.some((entry) => entry === modelRef || entry === bare);
}
