/**
 * Markdown as models write it → a Feishu rich-text (`post`) message. A post's `md` element renders
 * Feishu's Markdown subset (bold, italic, strikethrough, links, lists, quotes, code blocks, rules) but
 * not headings, so `# Title` becomes a bold line; everything else is passed as written. The result is
 * the JSON string the message APIs take as `content`.
 */
export function markdownToFeishuPost(markdown: string): string {
  const lines: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    lines.push(heading ? `**${heading[1]}**` : line);
  }
  const text = lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return JSON.stringify({ zh_cn: { content: [[{ tag: "md", text }]] } });
}

/** The plain text a post carries (what the fake platform and `simulate` show). */
export function feishuPostText(content: string): string {
  try {
    const post = JSON.parse(content) as Record<
      string,
      { title?: string; content?: Array<Array<{ text?: string }>> }
    >;
    const body = Object.values(post)[0];
    return (body?.content ?? [])
      .map((paragraph) => paragraph.map((element) => element.text ?? "").join(""))
      .join("\n");
  } catch {
    return content;
  }
}
