import { describe, expect, it } from "vitest";
import { signalText } from "../../../functions/channels/signal/format.ts";

/** Markdown → Signal text and signal-cli `textStyle` ranges (functions/channels/signal/format.ts). */
describe("Signal text styles", () => {
  it("turns bold, italic, strike, spoiler and code into ranges over the plain text", () => {
    expect(signalText("a **b** _c_ ~~d~~ ||e|| `f`")).toEqual({
      text: "a b c d e f",
      textStyle: ["2:1:BOLD", "4:1:ITALIC", "6:1:STRIKETHROUGH", "8:1:SPOILER", "10:1:MONOSPACE"],
    });
  });

  it("keeps snake_case, list bullets, lone markers and what is inside code as written", () => {
    expect(signalText("* item with snake_case_name and 2 * 3")).toEqual({
      text: "* item with snake_case_name and 2 * 3",
      textStyle: [],
    });
    expect(signalText("`**not bold**`")).toEqual({
      text: "**not bold**",
      textStyle: ["0:12:MONOSPACE"],
    });
  });

  it("takes a fenced block without its language line, and counts in UTF-16 units as Signal does", () => {
    expect(signalText("👋 **hi**\n```ts\nconst x = 1;\n```")).toEqual({
      text: "👋 hi\nconst x = 1;",
      textStyle: ["3:2:BOLD", "6:12:MONOSPACE"],
    });
  });
});
