/**
 * Markdown as models write it → Teams message text (`textFormat: "markdown"`). Teams renders
 * bold, italic, strike, inline code, code blocks, links and lists itself; it has no headings or
 * tables, so `# h` becomes `**h**` and table rule lines are dropped (rows stay readable as text).
 */
export function markdownToTeams(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      out.push(line);
      continue;
    }
    if (inFence) {
      out.push(line);
      continue;
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(`**${heading[1]!.replace(/\*\*/g, "")}**`);
      continue;
    }
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)) continue;
    out.push(line);
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
