import { describe, expect, it } from "vitest";
import {
  attachmentText,
  attachmentUrl,
  MAX_ATTACHMENT_PREFIX_BYTES,
  mediaMaxMbLimit,
} from "../../functions/channels/attachment-download.ts";

/** A body streamed in chunks, with no Content-Length (a sender may omit it). */
function streamed(chunks: Uint8Array[]): Response {
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
  return new Response(body);
}

describe("attachment download ends (every channel's fetchAttachment)", () => {
  it("names a missing or malformed link in the channel's words", () => {
    expect(attachmentUrl({})).toEqual({ skipped: "no download link" });
    expect(attachmentUrl({ url: "not a url" }, "media URL")).toEqual({
      skipped: "malformed media URL",
    });
    expect(attachmentUrl({ url: "https://files.example/a.txt" })).toEqual(
      new URL("https://files.example/a.txt"),
    );
  });

  it("refuses a body larger than mediaMaxMb, declared or found while streaming", async () => {
    const limit = mediaMaxMbLimit(1);
    expect(limit).toEqual({ maxBytes: 1024 * 1024, tooLarge: "larger than mediaMaxMb (1 MB)" });
    // A fractional mediaMaxMb is a whole number of bytes (as Discord's own bound already was).
    expect(mediaMaxMbLimit(0.1).maxBytes).toBe(104_857);
    expect(await attachmentText(new Response("tiny"), mediaMaxMbLimit(0.1))).toEqual({
      text: "tiny",
    });
    const declared = new Response("x", { headers: { "content-length": String(2 * 1024 * 1024) } });
    expect(await attachmentText(declared, limit)).toEqual({
      skipped: "larger than mediaMaxMb (1 MB)",
    });
    const small = { maxBytes: 10, tooLarge: "larger than ten bytes" };
    expect(
      await attachmentText(
        streamed([new Uint8Array(6).fill(0x61), new Uint8Array(6).fill(0x62)]),
        small,
      ),
    ).toEqual({ skipped: "larger than ten bytes" });
  });

  it("keeps the whole text of a small file, and of a large one only what the model can read, never half a character", async () => {
    expect(await attachmentText(new Response("héllo"), mediaMaxMbLimit(1))).toEqual({
      text: "héllo",
    });
    // A two-byte character straddles the kept prefix: it is left out, not mangled into U+FFFD.
    const bytes = new Uint8Array(MAX_ATTACHMENT_PREFIX_BYTES + 10).fill(0x61);
    bytes.set([0xc3, 0xa9], MAX_ATTACHMENT_PREFIX_BYTES - 1);
    const result = await attachmentText(streamed([bytes]), mediaMaxMbLimit(5));
    expect(result).toMatchObject({ truncated: true });
    const text = (result as { text: string }).text;
    expect(text.length).toBe(MAX_ATTACHMENT_PREFIX_BYTES - 1);
    expect(text).not.toContain("\uFFFD");
  });
});
