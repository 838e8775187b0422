/**
 * Markdown as models write it → Google Chat's text formatting (developers.google.com/workspace/chat/format-messages):
 * `**b**`/`__b__` → `*b*`, `*i*` → `_i_`, `~~s~~` → `~s~`, `[t](u)` → `<u|t>`, `# h` → `*h*`,
 * `- x` → `• x`. Inline code and fenced code blocks are kept as they are (Chat renders both).
 */
export function markdownToGoogleChat(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      out.push(line.trim().startsWith("~~~") ? line.replace("~~~", "```") : line);
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
  if (heading) return `*${stripEmphasis(heading[1]!)}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  return convertInline(line);
}

function convertInline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? part : convertSpan(part)))
    .join("");
}

const BOLD = "\u0000B";

function convertSpan(text: string): string {
  return text
    .replace(
      /!?\[([^\]\n]+)\]\(((?:https?|mailto):[^)\s]+)\)/g,
      (_m, label: string, url: string) =>
        label === url ? url : `<${url}|${label.replace(/[|>]/g, " ")}>`,
    )
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1_$2_")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "~$1~")
    .replaceAll(BOLD, "*");
}

function stripEmphasis(text: string): string {
  return text.replace(/\*\*|__|\*/g, "");
}
