import { describe, expect, it } from "vitest";
import { describeAttachments } from "../../functions/channels/attachments.ts";
import { mediaKey, mediaStoreFor } from "../../functions/media/store.ts";
import { suiteConfig, testEnv } from "../agent/model-helpers.ts";

/**
 * An event may name media already in the store (the HTTP API stores a request's images first), but
 * only under the exact key its own attachment would get: a reference to another session's (or
 * another event's) media is refused, so no sender can make the model read someone else's image.
 */
describe("media attachments", () => {
  const route = { channel: "openai", accountId: "default", to: "u" };
  const ctx = { env: testEnv, config: suiteConfig, account: undefined };
  const intake = (eventKey: string) => ({
    store: mediaStoreFor(testEnv)!,
    config: suiteConfig.tools.media,
    keyFor: (index: number) => mediaKey("main", "agent:main:openai:u", eventKey, index),
  });

  it("takes the event's own key and refuses any other", async () => {
    const own = await mediaKey("main", "agent:main:openai:u", "openai:req-1", 0);
    const other = await mediaKey("main", "agent:main:openai:someone-else", "openai:req-1", 0);
    const stored = (ref: string) => ({
      name: "image-1.png",
      mimeType: "image/png",
      stored: { ref, mimeType: "image/png", sizeBytes: 73 },
    });
    const [mine, theirs] = await describeAttachments(
      [stored(own), stored(other)],
      undefined,
      route,
      ctx,
      intake("openai:req-1"),
    );
    expect(mine!.media).toMatchObject({ kind: "image", ref: own, mimeType: "image/png" });
    expect(theirs!.media).toBeUndefined();
    expect(theirs!.note).toContain("not this message's");
  });

  it("a voice note with no speech-to-text model is not downloaded, and says why", async () => {
    let downloads = 0;
    const adapter = {
      fetchAttachment: async () => {
        downloads++;
        return { skipped: "must not be called" };
      },
    } as unknown as Parameters<typeof describeAttachments>[1];
    const config = { ...suiteConfig.tools.media, models: [] };
    const [voice] = await describeAttachments(
      [{ name: "voice.ogg", mimeType: "audio/ogg", sizeBytes: 2857, url: "tg-file:abc" }],
      adapter,
      route,
      ctx,
      { ...intake("openai:req-2"), config },
    );
    expect(downloads).toBe(0);
    expect(voice!.transcriptionError).toContain("no speech-to-text model is configured");
    expect(voice!.note).toContain("not transcribed:");
  });
});
