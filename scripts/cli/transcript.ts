/**
 * `sessions show` for people: one line (or block) per turn — who spoke, when, what — instead of the
 * stored message JSON. Tool calls show their name and arguments, tool results their first lines.
 */
const TOOL_PREVIEW_CHARS = 300;

export interface TranscriptEntry {
  seq: number;
  role: string;
  content: unknown;
  createdAt: string;
}

export function formatTranscript(entries: TranscriptEntry[]): string[] {
  return entries.flatMap((entry) => formatTurn(entry));
}

function formatTurn(entry: TranscriptEntry): string[] {
  const when = entry.createdAt.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const message =
    typeof entry.content === "object" && entry.content !== null
      ? (entry.content as Record<string, unknown>)
      : { content: entry.content };
  const text =
    typeof message.content === "string"
      ? message.content
      : message.content === undefined
        ? ""
        : JSON.stringify(message.content);
  const head = `[${when}] #${entry.seq}`;
  if (entry.role === "tool") {
    const name = typeof message.name === "string" ? message.name : "tool";
    const failed = message.isError === true ? " (error)" : "";
    return [`${head} tool ${name}${failed} ←`, ...indent(preview(text))];
  }
  const lines = [`${head} ${entry.role}:`, ...indent(text)];
  const calls = Array.isArray(message.toolCalls)
    ? (message.toolCalls as Array<{ name?: unknown; arguments?: unknown }>)
    : [];
  for (const call of calls)
    lines.push(`    → ${String(call.name)}(${preview(JSON.stringify(call.arguments ?? {}))})`);
  return lines;
}

function preview(text: string): string {
  return text.length > TOOL_PREVIEW_CHARS
    ? `${text.slice(0, TOOL_PREVIEW_CHARS)}… (${text.length} chars)`
    : text;
}

function indent(text: string): string[] {
  return text === "" ? [] : text.split("\n").map((line) => `    ${line}`);
}
