import { describe, expect, it } from "vitest";
import { callModel, type CallModelArgs } from "../../functions/agent/model-call.ts";
import {
  IMAGE_REMOVED_NOTE,
  IMAGE_STRIPPED_NOTICE,
  IMAGE_TURNS_KEPT,
} from "../../functions/agent/media-request.ts";
import { UNMETERED } from "../../functions/agent/metering.ts";
import type { Message } from "../../functions/agent/types.ts";
import type { MediaPart } from "../../functions/media/parts.ts";
import { imagesOf } from "../fakes/model-images.ts";
import { RED_PNG_BASE64, pdfBytes, redPng } from "../fixtures/media/images.ts";
import {
  newScenario,
  recorded,
  recordingSleep,
  script,
  suiteConfig,
  testEnv,
} from "./model-helpers.ts";

/**
 * Images to the model through callModel and the fake model server, which refuses image parts a
 * real API would refuse (test/fakes/model-images.ts): the wire format per API, the replay rule,
 * a text-only model, and a provider 400 about an image.
 */

const store = new Map<string, Uint8Array>();
const load = async (ref: string) => store.get(ref);

function imagePart(ref: string, bytes = redPng()): MediaPart {
  store.set(ref, bytes);
  return {
    kind: "image",
    ref,
    mimeType: "image/png",
    sizeBytes: bytes.byteLength,
    name: "red.png",
  };
}

function imageTurn(scenario: string, text: string, ref: string, bytes?: Uint8Array): Message {
  return {
    role: "user",
    content: `${text} [scenario:${scenario}]`,
    media: [imagePart(ref, bytes)],
  };
}

function args(
  model: string,
  messages: Message[],
  extra: Partial<CallModelArgs> = {},
): CallModelArgs {
  return {
    config: suiteConfig,
    env: testEnv,
    selection: { primary: model, fallbacks: [] },
    request: { system: "sys", messages, tools: [] },
    meter: UNMETERED,
    sleep: recordingSleep().sleep,
    loadMedia: load,
    ...extra,
  };
}

describe("images to the model", () => {
  it("sends an Anthropic base64 image block before the text, with the stored bytes", async () => {
    const scenario = newScenario("img-anthropic");
    await script(scenario, [{ type: "text", text: "a red square" }]);
    const held: number[] = [];
    const result = await callModel(
      args("fakeanthropic/claude-test", [imageTurn(scenario, "what is this?", `a/${scenario}`)], {
        onImages: (report) => held.push(report.heldBytes),
      }),
    );
    expect(result.text).toBe("a red square");
    const [request] = await recorded(scenario);
    const content = request!.body.messages[0].content;
    expect(content[0]).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: RED_PNG_BASE64 },
    });
    expect(content[1].type).toBe("text");
    expect(held).toEqual([redPng().byteLength]);
  });

  it("sends an OpenAI image_url part as a data URL", async () => {
    const scenario = newScenario("img-openai");
    await script(scenario, [{ type: "text", text: "red" }]);
    await callModel(args("fakeopenai/gpt-test", [imageTurn(scenario, "colour?", `o/${scenario}`)]));
    const [request] = await recorded(scenario);
    const content = request!.body.messages.at(-1).content;
    expect(content[0]).toEqual({ type: "text", text: `colour? [scenario:${scenario}]` });
    expect(content[1]).toEqual({
      type: "image_url",
      image_url: { url: `data:image/png;base64,${RED_PNG_BASE64}` },
    });
  });

  it(`keeps pixels for the last ${IMAGE_TURNS_KEPT} image turns only; older ones say they were seen`, async () => {
    const scenario = newScenario("img-replay");
    await script(scenario, [{ type: "text", text: "ok" }]);
    const messages: Message[] = [];
    for (let i = 0; i < IMAGE_TURNS_KEPT + 2; i++) {
      messages.push(imageTurn(scenario, `picture ${i}`, `r/${scenario}/${i}`));
      messages.push({ role: "assistant", content: `seen ${i}` });
    }
    messages.push({ role: "user", content: `and now? [scenario:${scenario}]` });
    await callModel(args("fakeanthropic/claude-test", messages));
    const [request] = await recorded(scenario);
    expect(imagesOf("anthropic", request!.body)).toHaveLength(IMAGE_TURNS_KEPT);
    const texts = JSON.stringify(request!.body.messages);
    expect(texts.split(IMAGE_REMOVED_NOTE).length - 1).toBe(2);
  });

  it("tells a model without image input that there was an image, and sends no pixels", async () => {
    const scenario = newScenario("img-text-only");
    await script(scenario, [{ type: "text", text: "I cannot see it" }]);
    await callModel(
      args("fakeanthropic/claude-small", [imageTurn(scenario, "look", `t/${scenario}`)]),
    );
    const [request] = await recorded(scenario);
    expect(imagesOf("anthropic", request!.body)).toEqual([]);
    expect(JSON.stringify(request!.body)).toContain("takes no image input");
  });

  it("on a provider 400 about an image, retries once without pixels and says so", async () => {
    const scenario = newScenario("img-refused");
    await script(scenario, [
      {
        type: "error",
        status: 400,
        message: "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum",
      },
      { type: "text", text: "answered without it" },
    ]);
    const notices: string[] = [];
    const result = await callModel(
      args("fakeanthropic/claude-test", [imageTurn(scenario, "see", `x/${scenario}`)], {
        onNotice: (text) => notices.push(text),
      }),
    );
    expect(result.text).toBe("answered without it");
    expect(notices).toEqual([IMAGE_STRIPPED_NOTICE]);
    const requests = await recorded(scenario);
    expect(requests).toHaveLength(2);
    expect(imagesOf("anthropic", requests[0]!.body)).toHaveLength(1);
    expect(imagesOf("anthropic", requests[1]!.body)).toEqual([]);
    expect(JSON.stringify(requests[1]!.body)).toContain("not shown: the model refused it");
  });

  it("the fake refuses bytes that are not the declared image type, as the API does; the turn still answers", async () => {
    const scenario = newScenario("img-mismatch");
    await script(scenario, [{ type: "text", text: "fine" }]);
    const turn = imageTurn(scenario, "odd", `m/${scenario}`, pdfBytes());
    const result = await callModel(args("fakeanthropic/claude-test", [turn]));
    expect(result.text).toBe("fine");
    const requests = await recorded(scenario);
    expect(requests).toHaveLength(2);
    expect(imagesOf("anthropic", requests[1]!.body)).toEqual([]);
  });

  it("a 400 that is not about an image is not retried", async () => {
    const scenario = newScenario("img-other-400");
    await script(scenario, [{ type: "error", status: 400, message: "max_tokens: too large" }]);
    const failed = await callModel(
      args("fakeanthropic/claude-test", [imageTurn(scenario, "x", `n/${scenario}`)]),
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(await recorded(scenario)).toHaveLength(1);
  });
});
