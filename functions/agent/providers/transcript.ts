import type { Message } from "../types.ts";

export const MISSING_TOOL_RESULT =
  "No result was recorded for this tool call (the run was interrupted).";

/**
 * Both wire formats reject a transcript where a tool call has no result, a result has no call, or
 * an assistant turn is empty. A session transcript can contain all three after an interrupted run
 * or a compaction, so every request goes through this first: orphan results are dropped, missing
 * results are filled with an explicit error, empty assistant turns are dropped.
 */
export function sanitizeTranscript(messages: Message[]): Message[] {
  const out: Message[] = [];
  let open: Map<string, string> = new Map(); // unanswered tool call id → tool name

  const closeOpenCalls = () => {
    for (const [toolCallId, name] of open) {
      out.push({ role: "tool", toolCallId, name, content: MISSING_TOOL_RESULT, isError: true });
    }
    open = new Map();
  };

  for (const message of messages) {
    if (message.role === "tool") {
      if (!open.has(message.toolCallId)) continue;
      open.delete(message.toolCallId);
      out.push(message);
      continue;
    }
    closeOpenCalls();
    if (message.role === "assistant") {
      const calls = message.toolCalls ?? [];
      if (!message.content && !calls.length) continue;
      out.push(message);
      for (const call of calls) open.set(call.id, call.name);
      continue;
    }
    out.push(message);
  }
  closeOpenCalls();
  return out;
}

/** Parses streamed tool arguments; unparsable text is kept as `{ _raw }` so nothing is lost. */
export function parseToolArguments(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _raw: text };
}
