/**
 * Markdown as models write it → Telegram's HTML parse mode
 * (https://core.telegram.org/bots/api#html-style): `**b**`/`__b__` → <b>, `*i*`/`_i_` → <i>,
 * `~~s~~` → <s>, `||x||` → <tg-spoiler>, `[t](u)` → <a href="u">, `` `c` `` → <code>, fenced blocks →
 * <pre><code class="language-x">, `# h` → <b>, `- x` → `• x`, `> q` lines → <blockquote>.
 * Everything else is text: `&`, `<`, `>` are escaped everywhere (inside code too), so model text
 * can never open a tag of its own. Only http(s)/mailto/tg links become links. Telegram rejects a
 * message whose markup it cannot parse ("can't parse entities"); send.ts then sends the plain text.
 */
export function markdownToTelegramHtml(markdown: string): string {
  const out: string[] = [];
  let fence: { lang: string; lines: string[] } | undefined;
  let quote: string[] = [];
  const flushQuote = () => {
    if (quote.length) out.push(`<blockquote>${quote.join("\n")}</blockquote>`);
    quote = [];
  };
  for (const line of markdown.split("\n")) {
    const fenceMark = /^\s*(```|~~~)\s*([\w+#.-]*)\s*$/.exec(line);
    if (fence) {
      if (fenceMark && !fenceMark[2]) {
        const cls = fence.lang ? ` class="language-${escapeAttr(fence.lang)}"` : "";
        out.push(`<pre><code${cls}>${escapeHtml(fence.lines.join("\n"))}</code></pre>`);
        fence = undefined;
      } else fence.lines.push(line);
      continue;
    }
    if (fenceMark) {
      flushQuote();
      fence = { lang: fenceMark[2] ?? "", lines: [] };
      continue;
    }
    const quoted = /^\s*>\s?(.*)$/.exec(line);
    if (quoted) {
      quote.push(convertInline(quoted[1]!));
      continue;
    }
    flushQuote();
    out.push(convertLine(line));
  }
  flushQuote();
  // An unclosed fence (a chunk cut mid-block) still shows as code.
  if (fence) out.push(`<pre><code>${escapeHtml(fence.lines.join("\n"))}</code></pre>`);
  return out.join("\n");
}

function convertLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `<b>${convertInline(heading[1]!.replace(/\*\*|__/g, ""))}</b>`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}• ${convertInline(bullet[2]!)}`;
  return convertInline(line);
}

/** One line outside code blocks; inline code spans are kept verbatim (escaped). */
function convertInline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part, index) =>
      index % 2 === 1 ? `<code>${escapeHtml(part.slice(1, -1))}</code>` : convertSpan(part),
    )
    .join("");
}

function convertSpan(text: string): string {
  const kept: string[] = [];
  const keep = (html: string) => {
    kept.push(html);
    return `\u0002${kept.length - 1}\u0002`;
  };
  let s = text.replace(
    /\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:|tg:\/\/)[^)\s]+)\)/g,
    (_m, label: string, url: string) =>
      keep(`<a href="${escapeAttr(url)}">${convertEmphasis(escapeHtml(label))}</a>`),
  );
  s = convertEmphasis(escapeHtml(s));
  return s.replace(/\u0002(\d+)\u0002/g, (_m, index: string) => kept[Number(index)]!);
}

function convertEmphasis(escaped: string): string {
  return escaped
    .replace(/\*\*(?=\S)([^*\n]+?)(?<=\S)\*\*/g, "<b>$1</b>")
    .replace(/__(?=\S)([^_\n]+?)(?<=\S)__/g, "<b>$1</b>")
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\w)/g, "$1<i>$2</i>")
    .replace(/(^|[^\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?!\w)/g, "$1<i>$2</i>")
    .replace(/~~(?=\S)([^~\n]+?)(?<=\S)~~/g, "<s>$1</s>")
    .replace(/\|\|(?=\S)([^|\n]+?)(?<=\S)\|\|/g, "<tg-spoiler>$1</tg-spoiler>");
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttr(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}
