import { chunkText, type ChunkMode } from "../chunk.ts";

/**
 * Markdown as models write it → Slack mrkdwn (https://docs.slack.dev/messaging/formatting-message-text):
 * `**b**`→`*b*`, `*i*`/`_i_`→`_i_`, `~~s~~`→`~s~`, `[t](u)`→`<u|t>`, `# h`→`*h*`, `- x`→`• x`;
 * `&`, `<`, `>` escaped except in Slack's own tokens (`<@U…>`, `<#C…>`, `<!here>`, `<http…|…>`) and
 * a leading `>` quote. Code blocks and inline code pass through untouched (fence language dropped:
 * Slack does not render it).
 */
export function markdownToMrkdwn(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    const fence = /^\s*(```|~~~)/.exec(line);
    if (fence) {
      out.push("```");
      inFence = !inFence;
      continue;
    }
    out.push(inFence ? escapeCode(line) : convertLine(line));
  }
  return out.join("\n");
}

function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `*${convertInline(heading[1]!.replace(/\*\*|__/g, ""))}*`;
  const quote = /^(\s*>\s?)(.*)$/.exec(line);
  if (quote) return `>${convertInline(quote[2]!)}`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  return convertInline(line);
}

/** Converts one line outside code blocks, leaving inline code spans as they are. */
function convertInline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? escapeCode(part) : convertSpan(part)))
    .join("");
}

const BOLD = "\u0001";

function convertSpan(text: string): string {
  const links: string[] = [];
  const keep = (token: string) => {
    links.push(token);
    return `\u0002${links.length - 1}\u0002`;
  };
  let s = text
    // Slack's own tokens survive as written.
    .replace(
      /<(?:[@#!][^<>\s][^<>]*|https?:\/\/[^<>\s]+(?:\|[^<>]*)?|mailto:[^<>\s]+(?:\|[^<>]*)?)>/g,
      (token) => keep(token),
    )
    .replace(
      /!?\[([^\]\n]+)\]\((https?:\/\/[^)\s]+|mailto:[^)\s]+)\)/g,
      (_m, label: string, url: string) => keep(`<${url}|${escapeText(label).replace(/\|/g, "¦")}>`),
    );
  s = escapeText(s)
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1_$2_")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "~$1~")
    .replace(new RegExp(BOLD, "g"), "*");
  return s.replace(/\u0002(\d+)\u0002/g, (_m, index: string) => links[Number(index)]!);
}

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Inside code Slack still needs &, <, > escaped, or `<x>` would be read as a link. */
function escapeCode(text: string): string {
  return escapeText(text);
}

/** Splits a reply for Slack at `textChunkLimit` (fence-safe; `newline` mode prefers paragraph breaks). */
export function chunkForSlack(markdown: string, limit: number, mode: ChunkMode): string[] {
  return chunkText(markdown, limit, mode);
}
