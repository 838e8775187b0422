import { describe, expect, it } from "vitest";
import { lineTextMessages, markdownToLineText } from "../../../functions/channels/line/format.ts";

describe("LINE text", () => {
  it("strips Markdown to the plain text LINE shows", () => {
    const markdown = [
      "# Plan",
      "",
      "**Bold** and *italic* and ~~gone~~ and `code`",
      "- one",
      "- [docs](https://example.com/x)",
      "```ts",
      "const a = **b**;",
      "```",
    ].join("\n");
    expect(markdownToLineText(markdown)).toBe(
      [
        "Plan",
        "",
        "Bold and italic and gone and code",
        "• one",
        "• docs (https://example.com/x)",
        "const a = **b**;",
      ].join("\n"),
    );
  });

  it("splits into at most five messages of at most the per-message limit", () => {
    expect(lineTextMessages("short", 5000, "length")).toEqual(["short"]);
    const paragraphs = Array.from({ length: 5 }, (_, i) => `${String(i).repeat(4000)}`).join(
      "\n\n",
    );
    const split = lineTextMessages(paragraphs, 5000, "newline");
    expect(split).toHaveLength(5);
    expect(split.every((m) => m.length <= 5000)).toBe(true);
    // Line breaks that would need a sixth message: cut by length instead.
    const awkward = Array.from({ length: 8 }, () => "x".repeat(3100)).join("\n");
    const cut = lineTextMessages(awkward, 5000, "length");
    expect(cut.length).toBeLessThanOrEqual(5);
    expect(cut.every((m) => m.length <= 5000)).toBe(true);
    expect(cut.join("")).toBe(awkward);
    // Never between the halves of a surrogate pair.
    const emoji = lineTextMessages(`a${"😀".repeat(3000)}`, 5000, "length");
    expect(emoji.join("")).toBe(`a${"😀".repeat(3000)}`);
    expect(emoji.every((m) => !/[\uD800-\uDBFF]$/.test(m))).toBe(true);
    expect(lineTextMessages("   ", 5000, "length")).toEqual([]);
  });
});
