import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { toBase64 } from "../../../functions/media/parts.ts";
import { imagesOf } from "../../fakes/model-images.ts";
import { RED_PNG_BASE64, notAnImage, pdfBytes } from "../../fixtures/media/images.ts";
import { recorded } from "../../agent/model-helpers.ts";
import {
  messageEvent,
  newScenario,
  postSigned,
  scriptModel,
  slackCalls,
  slackMessages,
  uniqueId,
  waitFor,
} from "./helpers.ts";

/**
 * A Slack image reaches the model as an image part: downloaded with the bot token (Slack's host
 * rules, files.ts) after access control, kept in the media store (Miniflare's R2 behind `MEDIA`),
 * loaded for the model call. Bad media is refused with a note the model reads and nothing is kept.
 */

const testEnv = env as unknown as Env;
const fakeSlack = () => String(testEnv.FAKE_SLACK_URL);

async function serve(path: string, bytes: Uint8Array, contentType: string): Promise<string> {
  const res = await fetch(`${fakeSlack()}/_control/file`, {
    method: "POST",
    body: JSON.stringify({ path, contentBase64: toBase64(bytes), contentType }),
  });
  return ((await res.json()) as { url: string }).url;
}

async function shareFiles(scenario: string, files: Array<Record<string, unknown>>) {
  const channel = uniqueId("D");
  const body = messageEvent({
    eventId: uniqueId("Ev"),
    channel,
    channelType: "im",
    text: `what is in it? [scenario:${scenario}]`,
    ts: `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`,
    extra: { subtype: "file_share", files },
  });
  expect((await postSigned(body)).status).toBe(200);
  await waitFor(async () => ((await slackMessages(channel)).length ? true : undefined));
  const [request] = await recorded(scenario);
  return request!;
}

/** Sizes of every object in the media store. */
async function storedSizes(): Promise<number[]> {
  const listed = await testEnv.MEDIA!.list({ prefix: "media/" });
  return listed.objects.map((object) => object.size);
}

describe("Slack images", () => {
  it("a shared PNG reaches the model as an image block with the file's bytes", async () => {
    const scenario = newScenario("slack-image");
    await scriptModel(scenario, [{ type: "text", text: "A red square." }]);
    const png = Uint8Array.from(atob(RED_PNG_BASE64), (c) => c.charCodeAt(0));
    const url = await serve(`/files/${uniqueId("F")}/red.png`, png, "image/png");
    const request = await shareFiles(scenario, [
      { id: "F1", name: "red.png", mimetype: "image/png", size: png.byteLength, url_private: url },
    ]);
    expect(imagesOf("anthropic", { messages: [request.body.messages.at(-1)] })).toEqual([
      { mimeType: "image/png", bytes: png.byteLength },
    ]);
    const blocks = request.body.messages.at(-1).content;
    expect(blocks[0].source.data).toBe(RED_PNG_BASE64);
    expect(JSON.stringify(blocks)).toContain("[Image: red.png");
    const downloads = (await slackCalls("files.download")).filter((call) =>
      String(call.args.path).endsWith("/red.png"),
    );
    expect(downloads.length).toBeGreaterThanOrEqual(1);
    expect(downloads.at(-1)!.token).not.toBe("");
  });

  it("refuses bad media with a note and keeps nothing: not an image, the wrong kind, too large, a redirect away from Slack", async () => {
    const scenario = newScenario("slack-bad-media");
    await scriptModel(scenario, [{ type: "text", text: "Those did not come through." }]);
    const junk = notAnImage();
    const pdf = pdfBytes();
    const junkUrl = await serve(`/files/${uniqueId("F")}/junk.png`, junk, "image/png");
    const pdfUrl = await serve(`/files/${uniqueId("F")}/doc.png`, pdf, "image/png");
    const awayPath = `/files/${uniqueId("F")}/away.png`;
    await fetch(`${fakeSlack()}/_control/file`, {
      method: "POST",
      body: JSON.stringify({ path: awayPath, redirectTo: "http://10.0.0.7/away.png" }),
    });
    const awayUrl = `${fakeSlack()}${awayPath}`;
    const hugePath = `/files/${uniqueId("F")}/huge.png`;
    const request = await shareFiles(scenario, [
      {
        id: "F2",
        name: "junk.png",
        mimetype: "image/png",
        size: junk.byteLength,
        url_private: junkUrl,
      },
      {
        id: "F3",
        name: "doc.png",
        mimetype: "image/png",
        size: pdf.byteLength,
        url_private: pdfUrl,
      },
      { id: "F4", name: "away.png", mimetype: "image/png", size: 100, url_private: awayUrl },
      {
        id: "F5",
        name: "huge.png",
        mimetype: "image/png",
        size: 6 * 1024 * 1024,
        url_private: `${fakeSlack()}${hugePath}`,
      },
    ]);
    // DMs share the main session (dmScope "main"): only this turn must carry no image.
    const turn = { messages: [request.body.messages.at(-1)] };
    expect(imagesOf("anthropic", turn)).toEqual([]);
    const seen = JSON.stringify(turn);
    expect(seen).toContain("unrecognised or corrupt bytes");
    expect(seen).toContain("declared as image/png but the bytes are application/pdf");
    expect(seen).toContain("refusing to follow a redirect to 10.0.0.7 (not a Slack host)");
    expect(seen).toContain("over tools.media.image.maxBytes");
    const sizes = await storedSizes();
    expect(sizes).not.toContain(junk.byteLength);
    expect(sizes).not.toContain(pdf.byteLength);
    const hugeDownloads = (await slackCalls("files.download")).filter(
      (call) => call.args.path === hugePath,
    );
    expect(hugeDownloads).toEqual([]);
  });
});
