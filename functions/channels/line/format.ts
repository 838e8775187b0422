import { chunkText, type ChunkMode } from "../chunk.ts";
import { LINE_MESSAGES_PER_CALL } from "./config.ts";

/**
 * Markdown as models write it → LINE plain text (LINE renders no markup; OpenClaw strips it):
 * `**b**`/`__b__`/`*i*`/`_i_`/`~~s~~` lose their markers, `# h` becomes its text, `[t](u)` becomes
 * `t (u)`, `- x` becomes `• x`, `> q` keeps a plain `> `, code fences vanish (their content stays, as
 * written) and inline code loses its backticks.
 */
export function markdownToLineText(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    out.push(inFence ? line : convertLine(line));
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return convertInline(heading[1]!);
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) return "──────";
  return convertInline(line);
}

function convertInline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? part.slice(1, -1) : convertSpan(part)))
    .join("");
}

function convertSpan(text: string): string {
  return text
    .replace(
      /!?\[([^\]\n]+)\]\(((?:https?|mailto):[^)\s]+)\)/g,
      (_m, label: string, url: string) => (label === url ? url : `${label} (${url})`),
    )
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, "$1")
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, "$1")
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1$2")
    .replace(/(^|[^\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?!\w)/g, "$1$2")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "$1");
}

/**
 * One outbox chunk → the text messages of one API call: at most LINE_MESSAGES_PER_CALL, each at
 * most `perMessage` characters (UTF-16 units, never more than LINE's count). Split at paragraph or
 * line breaks where that fits; when it would take more than five messages, cut by length instead,
 * which always fits because a chunk is at most five messages long (and never splits a surrogate pair).
 */
export function lineTextMessages(text: string, perMessage: number, mode: ChunkMode): string[] {
  const plain = text.trim();
  if (!plain) return [];
  const pieces = chunkText(plain, perMessage, mode).filter((piece) => piece.length > 0);
  const clean = pieces.every(
    (piece) => piece.length <= perMessage && !/[\uD800-\uDBFF]$/.test(piece),
  );
  if (pieces.length <= LINE_MESSAGES_PER_CALL && clean) return pieces;
  const cut: string[] = [];
  let rest = plain;
  while (rest.length > 0) {
    let end = Math.min(perMessage, rest.length);
    // Never split a surrogate pair.
    if (end < rest.length && /[\uD800-\uDBFF]/.test(rest[end - 1]!)) end -= 1;
    cut.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  return cut;
}
