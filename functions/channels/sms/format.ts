import { TWILIO_MAX_BODY_CHARS } from "./config.ts";

/**
 * Markdown as models write it → plain SMS text (OpenClaw: "SMS output is plain text: markdown is
 * stripped, fenced code blocks are unwrapped, links become `label (url)`"). Emphasis markers,
 * heading hashes, quote markers and inline-code backticks go; bullets become `•`; a fenced block
 * keeps its lines without the fences. Never longer than its input, so a chunk cut at
 * `textChunkLimit` (≤ 1600) still fits one Twilio message.
 */
export function markdownToSms(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      continue;
    }
    out.push(inFence ? line : convertLine(line));
  }
  const text = out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return text.length > TWILIO_MAX_BODY_CHARS ? text.slice(0, TWILIO_MAX_BODY_CHARS) : text;
}

function convertLine(line: string): string {
  if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) return "";
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return convertInline(heading[1]!);
  const quote = /^\s*>\s?(.*)$/.exec(line);
  if (quote) return convertInline(quote[1]!);
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  return convertInline(line);
}

/** One line outside code blocks; inline code spans keep their text, only the backticks go. */
function convertInline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? part.slice(1, -1) : convertSpan(part)))
    .join("");
}

function convertSpan(text: string): string {
  return text
    .replace(/!?\[([^\]\n]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, label: string, url: string) => {
      const shown = label.trim();
      return !shown || shown === url ? url : `${shown} (${url})`;
    })
    .replace(/<(https?:\/\/[^>\s]+)>/g, "$1")
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, "$1")
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, "$1")
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1$2")
    .replace(/(^|[^\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?!\w)/g, "$1$2")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "$1");
}

/**
 * The Body of the MMS that carries a file: its caption, else the file's name, so the recipient
 * sees what it is and reconcile has a text to find it by (send.ts).
 */
export function mmsBody(caption: string, fileName: string): string {
  return markdownToSms(caption) || fileName;
}
