/**
 * Markdown as models write it → the "single star" text markup Google Chat and WhatsApp share:
 * `**b**`/`__b__` → `*b*`, `*i*` → `_i_`, `~~s~~` → `~s~`, `# h` → `*h*`, `- x` → `• x`. Inline code
 * and fenced code blocks are kept as they are (`~~~` fences become ```` ``` ````). Links are the one
 * difference between the platforms, so each channel says how a `[label](url)` is written.
 */
export function markdownToStarMarkup(
  markdown: string,
  link: (label: string, url: string) => string,
): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      out.push(line.trim().startsWith("~~~") ? line.replace("~~~", "```") : line);
      continue;
    }
    out.push(inFence ? line : convertLine(line, link));
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function convertLine(line: string, link: (label: string, url: string) => string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `*${heading[1]!.replace(/\*\*|__|\*/g, "")}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!, link)}`;
  return convertInline(line, link);
}

/** Inline code spans are left alone; the text between them is converted. */
function convertInline(text: string, link: (label: string, url: string) => string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) => (index % 2 === 1 ? part : convertSpan(part, link)))
    .join("");
}

/** Stands for a bold marker while single stars are turned into italics. */
const BOLD = "\u0000B";

function convertSpan(text: string, link: (label: string, url: string) => string): string {
  return text
    .replace(
      /!?\[([^\]\n]+)\]\(((?:https?|mailto):[^)\s]+)\)/g,
      (_m, label: string, url: string) => (label === url ? url : link(label, url)),
    )
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1_$2_")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "~$1~")
    .replaceAll(BOLD, "*");
}
