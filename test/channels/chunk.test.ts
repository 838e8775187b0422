import { describe, expect, it } from "vitest";
import { chunkText } from "../../functions/channels/chunk.ts";

describe("chunkText", () => {
  it("keeps short text whole and never exceeds the limit", () => {
    expect(chunkText("hello", 100)).toEqual(["hello"]);
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
    const chunks = chunkText(long, 120);
    expect(chunks.every((chunk) => chunk.length <= 120)).toBe(true);
    expect(chunks.join(" ").split(/\s+/)).toEqual(long.split(" "));
  });

  it("closes a code fence cut in two and reopens it with its language", () => {
    const code = Array.from({ length: 40 }, (_, i) => `const v${i} = ${i};`).join("\n");
    const chunks = chunkText(`Here:\n\n\`\`\`ts\n${code}\n\`\`\`\nDone.`, 200);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(200);
      expect((chunk.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(chunks[1]!.startsWith("```ts\n")).toBe(true);
  });

  it("newline mode prefers paragraph breaks", () => {
    const paragraphs = [
      "First paragraph is here.",
      "Second paragraph follows it.",
      "Third one closes.",
    ];
    const chunks = chunkText(paragraphs.join("\n\n"), 60, "newline");
    expect(chunks).toEqual([
      "First paragraph is here.\n\nSecond paragraph follows it.",
      "Third one closes.",
    ]);
  });

  it("ends a chunk after maxLines lines (Discord maxLinesPerMessage), code fences still closed and reopened", () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    const chunks = chunkText(lines.join("\n"), 2000, "length", 17);
    expect(chunks.map((chunk) => chunk.split("\n").length)).toEqual([17, 17, 6]);
    expect(chunks.join("\n")).toBe(lines.join("\n"));
    expect(chunkText(lines.slice(0, 17).join("\n"), 2000, "length", 17)).toHaveLength(1);

    const code = Array.from({ length: 30 }, (_, i) => `x${i}();`).join("\n");
    const fenced = chunkText(`\`\`\`js\n${code}\n\`\`\``, 2000, "length", 17);
    expect(fenced.length).toBeGreaterThan(1);
    for (const chunk of fenced) {
      expect((chunk.match(/```/g) ?? []).length % 2).toBe(0);
      expect(chunk.split("\n").length).toBeLessThanOrEqual(18); // a closing fence line may be added
    }
    expect(fenced[1]!.startsWith("```js\n")).toBe(true);
    expect(
      fenced.flatMap((chunk) => chunk.split("\n")).filter((line) => !line.startsWith("```")),
    ).toEqual(code.split("\n"));
  });
});
