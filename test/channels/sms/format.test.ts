import { describe, expect, it } from "vitest";
import { markdownToSms } from "../../../functions/channels/sms/format.ts";

describe("Markdown → SMS plain text", () => {
  it("strips emphasis, headings, quotes and inline-code backticks", () => {
    expect(
      markdownToSms(
        "# Plan\n**Bold** and *italic* and __strong__ and _em_ and ~~gone~~ and `code`\n> quoted",
      ),
    ).toBe("Plan\nBold and italic and strong and em and gone and code\nquoted");
  });

  it("rewrites links as label (url) and keeps bare URLs", () => {
    expect(
      markdownToSms(
        "See [the docs](https://example.com/docs) or <https://example.com> or [https://x.test](https://x.test)",
      ),
    ).toBe("See the docs (https://example.com/docs) or https://example.com or https://x.test");
  });

  it("unwraps fenced code blocks and keeps their lines as written", () => {
    expect(markdownToSms("Run:\n```bash\nnpm i **not bold**\n```\nDone.")).toBe(
      "Run:\nnpm i **not bold**\nDone.",
    );
  });

  it("turns bullets into • and drops horizontal rules", () => {
    expect(markdownToSms("- one\n* two\n---\n+ three")).toBe("• one\n• two\n\n• three");
  });

  it("leaves snake_case and arithmetic alone", () => {
    expect(markdownToSms("set max_tokens_total and 2*3*4")).toBe("set max_tokens_total and 2*3*4");
  });

  it("is never longer than its input, and never over Twilio's 1600 characters", () => {
    const long = `[${"x".repeat(900)}](https://e.test/${"y".repeat(900)})`;
    const out = markdownToSms(long);
    expect(out.length).toBeLessThanOrEqual(1600);
    const sample = "**a** [b](https://c.test) `d` # e\n- f";
    expect(markdownToSms(sample).length).toBeLessThanOrEqual(sample.length);
  });
});
