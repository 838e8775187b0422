import { describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../../functions/channels/telegram/format.ts";

describe("Markdown → Telegram HTML", () => {
  it("converts emphasis, links, headings and lists", () => {
    expect(
      markdownToTelegramHtml(
        "# Title\n**bold** and *it* and _it2_ and ~~gone~~ and ||secret||\n- item [site](https://example.com/a?b=1&c=2)",
      ),
    ).toBe(
      '<b>Title</b>\n<b>bold</b> and <i>it</i> and <i>it2</i> and <s>gone</s> and <tg-spoiler>secret</tg-spoiler>\n• item <a href="https://example.com/a?b=1&amp;c=2">site</a>',
    );
  });

  it("escapes every <, > and & so model text never opens a tag", () => {
    expect(markdownToTelegramHtml("a < b && <script>x</script> </b>")).toBe(
      "a &lt; b &amp;&amp; &lt;script&gt;x&lt;/script&gt; &lt;/b&gt;",
    );
  });

  it("keeps code verbatim (escaped) in inline spans and fenced blocks, with the language", () => {
    expect(markdownToTelegramHtml("run `a<b> **x**` now\n```ts\nif (a < b) { **no** }\n```")).toBe(
      'run <code>a&lt;b&gt; **x**</code> now\n<pre><code class="language-ts">if (a &lt; b) { **no** }</code></pre>',
    );
  });

  it("groups quote lines into one blockquote", () => {
    expect(markdownToTelegramHtml("> one\n> **two**\nafter")).toBe(
      "<blockquote>one\n<b>two</b></blockquote>\nafter",
    );
  });

  it("leaves non-web links as text and closes an unterminated fence", () => {
    expect(markdownToTelegramHtml("[x](javascript:alert(1))")).toBe("[x](javascript:alert(1))");
    expect(markdownToTelegramHtml("```\ncode")).toBe("<pre><code>code</code></pre>");
  });
});
