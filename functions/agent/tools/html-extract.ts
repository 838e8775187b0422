/**
 * Readable text from HTML, on workerd's own streaming parser (HTMLRewriter, built into the runtime:
 * no bundle cost, no DOM). A careful subset of what Readability does: scripts, styles and page
 * chrome (nav, footer, aside, forms) are dropped; when the page marks its main content (<main>,
 * <article>, role="main") and that part has substance, only it is kept. Markdown mode keeps
 * headings, list items, links and code blocks; text mode keeps only the words and line structure.
 */

export type ExtractMode = "markdown" | "text";

export interface ExtractedPage {
  title?: string;
  text: string;
  /** Which part of the page the text came from. */
  extractor: "html-main" | "html-body";
}

const SKIP = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "canvas",
  "iframe",
  "object",
  "nav",
  "footer",
  "aside",
  "form",
  "button",
  "select",
  "dialog",
  "head",
]);
const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);
const BLOCK = new Set([
  "p",
  "div",
  "section",
  "article",
  "main",
  "header",
  "blockquote",
  "table",
  "tr",
  "ul",
  "ol",
  "dl",
  "dt",
  "dd",
  "figure",
  "figcaption",
  "address",
  "details",
  "summary",
]);
const MAIN_MIN_CHARS = 200;

export async function extractReadableHtml(
  html: string,
  mode: ExtractMode,
  preferMain = true,
): Promise<ExtractedPage> {
  let skipDepth = 0;
  let mainDepth = 0;
  let preDepth = 0;
  let inTitle = false;
  let title = "";
  const all: string[] = [];
  const main: string[] = [];
  const markdown = mode === "markdown";

  const emit = (text: string) => {
    if (skipDepth > 0) return;
    all.push(text);
    if (mainDepth > 0) main.push(text);
  };
  const onEnd = (element: Element, handler: () => void) => {
    if (VOID.has(element.tagName)) return;
    try {
      element.onEndTag(handler);
    } catch {
      // An element that can have no end tag: nothing to close.
    }
  };

  const rewriter = new HTMLRewriter()
    .on("*", {
      element(element) {
        const tag = element.tagName.toLowerCase();
        if (tag === "title") {
          inTitle = true;
          onEnd(element, () => {
            inTitle = false;
          });
          return;
        }
        if (SKIP.has(tag)) {
          skipDepth++;
          onEnd(element, () => {
            skipDepth--;
          });
          return;
        }
        if (
          element.getAttribute("hidden") !== null ||
          element.getAttribute("aria-hidden") === "true"
        ) {
          skipDepth++;
          onEnd(element, () => {
            skipDepth--;
          });
          return;
        }
        const isMain =
          tag === "main" || tag === "article" || element.getAttribute("role") === "main";
        if (isMain) {
          mainDepth++;
          onEnd(element, () => {
            mainDepth--;
          });
        }
        if (/^h[1-6]$/.test(tag)) {
          emit(markdown ? `\n\n${"#".repeat(Number(tag[1]))} ` : "\n\n");
          onEnd(element, () => emit("\n\n"));
        } else if (tag === "br") {
          emit("\n");
        } else if (tag === "hr") {
          emit(markdown ? "\n\n---\n\n" : "\n\n");
        } else if (tag === "li") {
          emit("\n- ");
        } else if (tag === "pre") {
          emit(markdown ? "\n\n```\n" : "\n\n");
          preDepth++;
          onEnd(element, () => {
            preDepth--;
            emit(markdown ? "\n```\n\n" : "\n\n");
          });
        } else if (tag === "code" && preDepth === 0 && markdown) {
          emit("`");
          onEnd(element, () => emit("`"));
        } else if (tag === "td" || tag === "th") {
          emit(" | ");
        } else if (tag === "a" && markdown) {
          const href = element.getAttribute("href") ?? "";
          if (/^https?:\/\//i.test(href)) {
            emit("[");
            onEnd(element, () => emit(`](${href})`));
          }
        } else if (BLOCK.has(tag)) {
          emit("\n\n");
          onEnd(element, () => emit("\n\n"));
        }
      },
    })
    .onDocument({
      text(chunk) {
        if (inTitle) {
          title += chunk.text;
          return;
        }
        if (skipDepth > 0 || chunk.text === "") return;
        const decoded = decodeEntities(chunk.text);
        emit(preDepth > 0 ? `\u0000PRE${decoded.replace(/\n/g, "\u0000NL")}\u0000END` : decoded);
      },
    });

  await rewriter
    .transform(new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }))
    .arrayBuffer();

  const mainText = tidy(main.join(""));
  const useMain = preferMain && mainText.length >= MAIN_MIN_CHARS;
  const cleanTitle = decodeEntities(title).replace(/\s+/g, " ").trim();
  return {
    ...(cleanTitle ? { title: cleanTitle } : {}),
    text: useMain ? mainText : tidy(all.join("")),
    extractor: useMain ? "html-main" : "html-body",
  };
}

/** Collapses HTML whitespace outside <pre>, keeps paragraph breaks, restores preformatted text. */
function tidy(raw: string): string {
  const pre: string[] = [];
  const marked = raw.replace(/\u0000PRE([\s\S]*?)\u0000END/g, (_m, body: string) => {
    pre.push(body.replace(/\u0000NL/g, "\n"));
    return `\u0000P${pre.length - 1}\u0000`;
  });
  const collapsed = marked
    .replace(/[ \t\r\f\v\u00a0]*\n[ \t\r\f\v\u00a0\n]*/g, (m) =>
      m.split("\n").length > 2 ? "\n\n" : "\n",
    )
    .replace(/[ \t\r\f\v]+/g, " ")
    .replace(/\n /g, "\n")
    .replace(/ \n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/\n- (?=\n|$)/g, "\n")
    .trim();
  return collapsed.replace(/\u0000P(\d+)\u0000/g, (_m, index: string) => pre[Number(index)] ?? "");
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  copy: "©",
  reg: "®",
  trade: "™",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  middot: "·",
  bull: "•",
  times: "×",
  deg: "°",
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z][a-z0-9]*);/gi, (match, body: string) => {
    if (body[0] === "#") {
      const code =
        body[1] === "x" || body[1] === "X"
          ? Number.parseInt(body.slice(2), 16)
          : Number.parseInt(body.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff
        ? String.fromCodePoint(code)
        : match;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? match;
  });
}
