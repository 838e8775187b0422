/**
 * Markdown as models write it → WhatsApp's own formatting (*bold*, _italic_, ~strike~, `code`,
 * ```blocks```): `**b**`/`__b__` → `*b*`, `*i*` → `_i_`, `~~s~~` → `~s~`, `# h` → `*h*`,
 * `- x` → `• x`, `[t](u)` → `t (u)` (WhatsApp links bare URLs itself). Code is kept as it is.
 */
export function markdownToWhatsApp(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      out.push(line.replace("~~~", "```"));
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
  if (heading) return `*${heading[1]!.replace(/\*\*|__|\*/g, "")}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  return convertInline(line);
}

/** Inline code spans are left alone; the text between them is converted. */
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
      (_m, label: string, url: string) => (label === url ? url : `${label} (${url})`),
    )
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, `${BOLD}$1${BOLD}`)
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, `${BOLD}$1${BOLD}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1_$2_")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "~$1~")
    .replaceAll(BOLD, "*");
}
