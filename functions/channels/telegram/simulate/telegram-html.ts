/**
 * What Telegram does with `parse_mode: "HTML"` text (https://core.telegram.org/bots/api#html-style),
 * for the fake Bot API: checks the markup the way Telegram refuses it ("can't parse entities") and
 * returns the text a user sees (tags removed, the four named entities and numeric ones decoded).
 */
const ALLOWED_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "a",
  "tg-emoji",
  "code",
  "pre",
  "blockquote",
]);
const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

export type HtmlParse = { ok: true; visible: string } | { ok: false; error: string };

export function parseTelegramHtml(html: string): HtmlParse {
  const open: string[] = [];
  let visible = "";
  let i = 0;
  while (i < html.length) {
    const ch = html[i]!;
    if (ch === "<") {
      const end = html.indexOf(">", i);
      if (end < 0) return fail(`Unclosed start tag at byte offset ${i}`);
      const inner = html.slice(i + 1, end);
      const closing = inner.startsWith("/");
      const name = /^\/?([a-z-]+)/i.exec(inner)?.[1]?.toLowerCase();
      if (!name || !ALLOWED_TAGS.has(name))
        return fail(`Unsupported start tag "${inner.slice(0, 20)}" at byte offset ${i}`);
      if (closing) {
        if (open.pop() !== name)
          return fail(`Can't find end tag corresponding to start tag "${name}"`);
      } else {
        if (name === "a" && !/\bhref\s*=\s*"[^"]*"/.test(inner))
          return fail(`Can't find href in "a" tag at byte offset ${i}`);
        open.push(name);
      }
      i = end + 1;
      continue;
    }
    if (ch === "&") {
      const entity = /^&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/i.exec(html.slice(i, i + 12));
      if (!entity) return fail(`Can't find end of the entity starting at byte offset ${i}`);
      const body = entity[1]!;
      if (body.startsWith("#")) {
        const code =
          body[1] === "x" || body[1] === "X"
            ? parseInt(body.slice(2), 16)
            : parseInt(body.slice(1), 10);
        visible += String.fromCodePoint(code);
      } else {
        const named = NAMED_ENTITIES[body.toLowerCase()];
        if (named === undefined) return fail(`Unsupported HTML entity "&${body};"`);
        visible += named;
      }
      i += entity[0].length;
      continue;
    }
    visible += ch;
    i += 1;
  }
  if (open.length) return fail(`Can't find end tag corresponding to start tag "${open.at(-1)}"`);
  return { ok: true, visible };
}

function fail(detail: string): HtmlParse {
  return { ok: false, error: `Bad Request: can't parse entities: ${detail}` };
}
