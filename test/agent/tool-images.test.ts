import { describe, expect, it } from "vitest";
import { prepareImages } from "../../functions/agent/media-request.ts";
import type { Message } from "../../functions/agent/types.ts";
import { redPng } from "../fixtures/media/images.ts";

/**
 * A tool's images (a browser screenshot, a tool message's `media`): a model with image input gets
 * their pixels in one user message after the batch of tool results; any other model gets the tool
 * results' text alone (which names the stored reference), and nothing is loaded.
 */
const screenshot = (callId: string): Message => ({
  role: "tool",
  toolCallId: callId,
  name: "browser",
  content: `PNG screenshot.\nStored as media ref-${callId} (70 bytes, image/png).`,
  media: [{ kind: "image", ref: `ref-${callId}`, mimeType: "image/png", sizeBytes: 70 }],
});

const transcript: Message[] = [
  { role: "user", content: "look at the page" },
  {
    role: "assistant",
    content: "",
    toolCalls: [
      { id: "call_a", name: "browser", arguments: { action: "screenshot" } },
      { id: "call_b", name: "browser", arguments: { action: "read" } },
    ],
  },
  screenshot("call_a"),
  { role: "tool", toolCallId: "call_b", name: "browser", content: "page text" },
];

describe("a tool's images in a model request", () => {
  it("follow the batch of tool results as pixels for a model with image input", async () => {
    const loaded: string[] = [];
    const prepared = await prepareImages(transcript, {
      acceptsImages: true,
      modelRef: "fakeanthropic/claude-test",
      load: async (ref) => {
        loaded.push(ref);
        return redPng();
      },
    });
    expect(loaded).toEqual(["ref-call_a"]);
    expect(prepared.imageCount).toBe(1);
    expect(prepared.messages.slice(0, 4)).toEqual(transcript);
    expect(prepared.messages[4]).toMatchObject({
      role: "user",
      content: "[The image from tool call call_a above]",
      images: [{ mimeType: "image/png" }],
    });
    expect(prepared.messages).toHaveLength(5);
  });

  it("stay references for a model without image input: nothing loaded, nothing added", async () => {
    const prepared = await prepareImages(transcript, {
      acceptsImages: false,
      modelRef: "fakeanthropic/claude-small",
      load: async () => {
        throw new Error("no image may be loaded for a text-only model");
      },
    });
    expect(prepared.messages).toEqual(transcript);
    expect(prepared.imageCount).toBe(0);
  });
});
