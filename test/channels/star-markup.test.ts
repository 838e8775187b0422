import { describe, expect, it } from "vitest";
import { markdownToGoogleChat } from "../../functions/channels/googlechat/format.ts";
import { markdownToWhatsApp } from "../../functions/channels/whatsapp/format.ts";

/** The one converter Google Chat and both WhatsApp channels write with (functions/channels/star-markup.ts). */
describe("single-star markup", () => {
  const sample =
    "## **Plan**\n- **bold** and *it* and ~~gone~~\n`*raw*` [docs](https://x.test/a) https://y.test\n~~~\n**kept**\n~~~";

  it("writes Google Chat's links as <url|label> and leaves code alone", () => {
    expect(markdownToGoogleChat(sample)).toBe(
      "*Plan*\n• *bold* and _it_ and ~gone~\n`*raw*` <https://x.test/a|docs> https://y.test\n```\n**kept**\n```",
    );
    expect(markdownToGoogleChat("[a|b>c](https://x.test)")).toBe("<https://x.test|a b c>");
  });

  it("writes WhatsApp's links as label (url), the rest the same", () => {
    expect(markdownToWhatsApp(sample)).toBe(
      "*Plan*\n• *bold* and _it_ and ~gone~\n`*raw*` docs (https://x.test/a) https://y.test\n```\n**kept**\n```",
    );
    expect(markdownToWhatsApp("[https://x.test](https://x.test)")).toBe("https://x.test");
  });
});
