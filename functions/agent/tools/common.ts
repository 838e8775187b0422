import type * as z from "zod";
import type { DbEnv } from "../../db/client.ts";
import type { ToolContext, ToolResult } from "../types.ts";
import { WorkspaceError } from "../workspace.ts";
import { PermanentError } from "../../core/errors.ts";

/** Upper bound on any tool result the model sees; a tool that returns more is cut with a marker. */
export const MAX_TOOL_RESULT_CHARS = 64_000;

/** A tool failure whose message is meant for the model (bad arguments, refused URL, …). */
export class ToolInputError extends PermanentError {}

/** Validates model-supplied arguments; the error lists each bad field so the model can retry. */
export function parseToolArgs<T extends z.ZodType>(
  toolName: string,
  schema: T,
  args: Record<string, unknown>,
): z.infer<T> {
  if (typeof args._raw === "string") {
    throw new ToolInputError(`${toolName}: the arguments were not valid JSON`);
  }
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map(
    (issue) => `${issue.path.join(".") || "(arguments)"}: ${issue.message}`,
  );
  throw new ToolInputError(`${toolName}: invalid arguments — ${issues.join("; ")}`);
}

/** The database bindings from the tool context (tools get bindings, never secrets they don't need). */
export function dbEnvOf(ctx: ToolContext): DbEnv {
  const url = ctx.env.DATABASE_URL;
  const proxy = ctx.env.EDGECLAW_PG_WS_PROXY;
  return {
    DATABASE_URL: typeof url === "string" ? url : undefined,
    EDGECLAW_PG_WS_PROXY: typeof proxy === "string" ? proxy : undefined,
  };
}

export function boundToolOutput(text: string, limit = MAX_TOOL_RESULT_CHARS): string {
  if (text.length <= limit) return text;
  const note = `\n\n[tool output truncated: ${text.length} chars, showing the first ${limit}]`;
  return text.slice(0, Math.max(0, limit - note.length)) + note;
}

/** Turns what a tool threw into a result the model can read; unexpected errors keep only their message. */
export function errorResult(toolName: string, error: unknown): ToolResult {
  if (error instanceof ToolInputError || error instanceof WorkspaceError)
    return { content: error.message, isError: true };
  const message = error instanceof Error ? error.message : String(error);
  return { content: `${toolName} failed: ${message}`, isError: true };
}
