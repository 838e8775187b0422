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
    const paragraphs = ["First paragraph is here.", "Second paragraph follows it.", "Third one closes."];
    const chunks = chunkText(paragraphs.join("\n\n"), 60, "newline");
    expect(chunks).toEqual(["First paragraph is here.\n\nSecond paragraph follows it.", "Third one closes."]);
  });
});
