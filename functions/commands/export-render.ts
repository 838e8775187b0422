import type { Message } from "../agent/types.ts";
import type { MediaPart } from "../media/parts.ts";

/**
 * A session's transcript as a file (`/export-session`): Markdown (the default), JSON or HTML,
 * chosen by the path's extension. What the model saw, in order, with each turn's time; images and
 * voice notes appear as their media references (never their bytes), and Anthropic's thinking
 * signatures and redacted blocks are left out (they mean nothing outside the provider).
 */
export type ExportFormat = "markdown" | "json" | "html";

export interface ExportedTurn {
  message: Message;
  at: number;
}

export interface ExportHeader {
  sessionKey: string;
  sessionId: string;
  agentId: string;
  exportedAt: number;
}

export function exportFormatOf(path: string): ExportFormat | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith(".md") || lower.endsWith(".markdown")) return "markdown";
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".html") || lower.endsWith(".htm")) return "html";
  return undefined;
}

export function renderExport(
  format: ExportFormat,
  header: ExportHeader,
  turns: readonly ExportedTurn[],
): string {
  if (format === "json")
    return `${JSON.stringify(
      {
        ...header,
        exportedAt: new Date(header.exportedAt).toISOString(),
        messages: turns.map((turn) => ({
          at: new Date(turn.at).toISOString(),
          ...plain(turn.message),
        })),
      },
      null,
      2,
    )}\n`;
  const markdown = renderMarkdown(header, turns);
  return format === "markdown" ? markdown : renderHtml(header, turns);
}

/** The message as stored, without pixels, signatures or encrypted thinking. */
function plain(message: Message): Record<string, unknown> {
  if (message.role === "user") {
    const { images: _pixels, ...rest } = message;
    return rest;
  }
  if (message.role === "assistant" && message.thinking) {
    const thinking = message.thinking.flatMap((block) =>
      block.type === "thinking" ? [block.text] : [],
    );
    const { thinking: _blocks, ...rest } = message;
    return thinking.length ? { ...rest, thinking } : rest;
  }
  return { ...message };
}

function renderMarkdown(header: ExportHeader, turns: readonly ExportedTurn[]): string {
  const lines = [
    `# Session ${header.sessionKey}`,
    "",
    `Agent ${header.agentId} · session ${header.sessionId} · exported ${iso(header.exportedAt)} · ${turns.length} message${turns.length === 1 ? "" : "s"}`,
  ];
  for (const { message, at } of turns) {
    lines.push("");
    if (message.role === "user") {
      lines.push(`## User · ${iso(at)}`, "", message.content);
      for (const part of message.media ?? [])
        lines.push("", `[${part.kind}: ${describePart(part)}]`);
    } else if (message.role === "assistant") {
      lines.push(`## Assistant · ${iso(at)}`);
      if (message.content) lines.push("", message.content);
      for (const call of message.toolCalls ?? [])
        lines.push(
          "",
          `Tool call \`${call.name}\` (${call.id}):`,
          "",
          fence(JSON.stringify(call.arguments, null, 2), "json"),
        );
    } else {
      lines.push(
        `### Tool result · ${message.name}${message.isError ? " (error)" : ""} · ${iso(at)}`,
        "",
        fence(message.content),
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

function renderHtml(header: ExportHeader, turns: readonly ExportedTurn[]): string {
  const blocks = turns.map(({ message, at }) => {
    if (message.role === "user")
      return `<section class="user"><h2>User · ${esc(iso(at))}</h2><pre>${esc(message.content)}</pre>${(message.media ?? []).map((part) => `<p>[${esc(part.kind)}: ${esc(describePart(part))}]</p>`).join("")}</section>`;
    if (message.role === "assistant")
      return `<section class="assistant"><h2>Assistant · ${esc(iso(at))}</h2>${message.content ? `<pre>${esc(message.content)}</pre>` : ""}${(message.toolCalls ?? []).map((call) => `<p>Tool call <code>${esc(call.name)}</code></p><pre>${esc(JSON.stringify(call.arguments, null, 2))}</pre>`).join("")}</section>`;
    return `<section class="tool"><h3>Tool result · ${esc(message.name)}${message.isError ? " (error)" : ""}</h3><pre>${esc(message.content)}</pre></section>`;
  });
  return [
    "<!doctype html>",
    `<html lang="en"><head><meta charset="utf-8"><title>Session ${esc(header.sessionKey)}</title>`,
    "<style>body{font:15px/1.5 system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem}pre{white-space:pre-wrap;background:#f6f6f6;padding:.5rem}section.user h2{color:#035}section.assistant h2{color:#530}</style>",
    `</head><body><h1>Session ${esc(header.sessionKey)}</h1><p>Agent ${esc(header.agentId)} · session ${esc(header.sessionId)} · exported ${esc(iso(header.exportedAt))}</p>`,
    ...blocks,
    "</body></html>",
    "",
  ].join("\n");
}

function describePart(part: MediaPart): string {
  return [
    part.name,
    part.ref,
    part.mimeType,
    part.transcript ? `heard: ${part.transcript}` : undefined,
  ]
    .filter(Boolean)
    .join(" · ");
}

/** A code fence longer than any backtick run inside, so the content cannot close it. */
function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
