/**
 * The model's Markdown as a Signal message: plain text plus signal-cli's `textStyle` ranges
 * (`start:length:STYLE`, in UTF-16 code units as Signal counts them) — `**bold**` / `__bold__`
 * BOLD, `*italic*` / `_italic_` ITALIC, `~~strike~~` STRIKETHROUGH, `||spoiler||` SPOILER,
 * `` `code` `` and fenced blocks MONOSPACE. A marker opens only where its closing one follows, and
 * not inside a word for `_` (snake_case stays as written) nor before a space for `*` (a list
 * bullet); code spans are taken as written, with no styles inside.
 */
export interface SignalText {
  text: string;
  textStyle: string[];
}

const MARKERS: Array<[string, string]> = [
  ["**", "BOLD"],
  ["__", "BOLD"],
  ["~~", "STRIKETHROUGH"],
  ["||", "SPOILER"],
  ["*", "ITALIC"],
  ["_", "ITALIC"],
];

export function signalText(markdown: string): SignalText {
  let text = "";
  const styles: string[] = [];
  const open = new Map<string, number>();
  const style = (start: number, name: string) => {
    if (text.length > start) styles.push(`${start}:${text.length - start}:${name}`);
  };
  let i = 0;
  while (i < markdown.length) {
    const code = codeAt(markdown, i);
    if (code) {
      const start = text.length;
      text += code.content;
      style(start, "MONOSPACE");
      i = code.end;
      continue;
    }
    const marker = MARKERS.find(([m]) => markdown.startsWith(m, i));
    if (marker) {
      const [m, name] = marker;
      const at = open.get(m);
      if (at !== undefined) {
        open.delete(m);
        style(at, name);
        i += m.length;
        continue;
      }
      if (opens(markdown, i, m)) {
        open.set(m, text.length);
        i += m.length;
        continue;
      }
    }
    text += markdown[i];
    i += 1;
  }
  return { text, textStyle: styles };
}

/** Whether `marker` at `i` starts a span: text right after it, and the same marker later on. */
function opens(markdown: string, i: number, marker: string): boolean {
  const next = markdown[i + marker.length];
  if (next === undefined || /\s/.test(next)) return false;
  if (marker === "_" || marker === "__") {
    const before = markdown[i - 1];
    if (before !== undefined && /[\p{L}\p{N}]/u.test(before)) return false;
  }
  const close = markdown.indexOf(marker, i + marker.length + 1);
  return close > 0 && !/\s/.test(markdown[close - 1] ?? " ");
}

/** A fenced block (its language line dropped) or an inline code span at `i`. */
function codeAt(markdown: string, i: number): { content: string; end: number } | undefined {
  if (markdown.startsWith("```", i)) {
    const close = markdown.indexOf("```", i + 3);
    if (close < 0) return undefined;
    const body = markdown.slice(i + 3, close);
    const firstBreak = body.indexOf("\n");
    const content =
      firstBreak >= 0 && /^[\w+-]*$/.test(body.slice(0, firstBreak))
        ? body.slice(firstBreak + 1)
        : body;
    return { content: content.replace(/\n$/, ""), end: close + 3 };
  }
  if (markdown[i] === "`") {
    const close = markdown.indexOf("`", i + 1);
    if (close <= i + 1 || markdown.slice(i + 1, close).includes("\n")) return undefined;
    return { content: markdown.slice(i + 1, close), end: close + 1 };
  }
  return undefined;
}
