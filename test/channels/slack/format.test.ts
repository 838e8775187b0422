import { describe, expect, it } from "vitest";
import { chunkForSlack, markdownToMrkdwn } from "../../../functions/channels/slack/format.ts";

describe("markdownToMrkdwn", () => {
  it("converts emphasis, strike, links, headings and bullets", () => {
    const md =
      "# Title\n**bold** and *italic* and _also_ and ~~gone~~\n- one\n* two\nsee [docs](https://example.com/a?b=1&c=2)";
    expect(markdownToMrkdwn(md)).toBe(
      "*Title*\n*bold* and _italic_ and _also_ and ~gone~\n• one\n• two\nsee <https://example.com/a?b=1&c=2|docs>",
    );
  });

  it("escapes &, < and > but keeps Slack tokens and quotes", () => {
    expect(
      markdownToMrkdwn("a < b && c > d, ask <@U123> in <#C42|general> <!here>\n> quoted"),
    ).toBe("a &lt; b &amp;&amp; c &gt; d, ask <@U123> in <#C42|general> <!here>\n>quoted");
  });

  it("leaves code alone apart from escaping, and drops the fence language", () => {
    const md = "use `**x**` here\n```ts\nconst a = **b** < c;\n```\n**after**";
    expect(markdownToMrkdwn(md)).toBe(
      "use `**x**` here\n```\nconst a = **b** &lt; c;\n```\n*after*",
    );
  });
});

describe("chunkForSlack", () => {
  it("keeps every chunk within the limit and never leaves a code fence open", () => {
    const code = `\`\`\`js\n${Array.from({ length: 80 }, (_, i) => `line(${i});`).join("\n")}\n\`\`\``;
    const chunks = chunkForSlack(`intro paragraph\n\n${code}\n\noutro`, 300, "newline");
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(300);
      expect((chunk.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(chunks.join("\n")).toContain("line(79);");
  });

  it("newline mode splits on paragraph breaks first", () => {
    const text = `${"a".repeat(150)}\n\n${"b".repeat(150)}`;
    expect(chunkForSlack(text, 200, "newline")).toEqual(["a".repeat(150), "b".repeat(150)]);
  });
});
