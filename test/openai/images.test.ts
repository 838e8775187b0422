import { SELF } from "cloudflare:test";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { imagesOf } from "../fakes/model-images.ts";
import { RED_PNG_BASE64, pdfBytes } from "../fixtures/media/images.ts";
import { toBase64 } from "../../functions/media/parts.ts";
import { newScenario, recorded, script } from "../agent/model-helpers.ts";

/**
 * `image_url` parts on /v1/chat/completions: a data URL reaches the model as an image (through the
 * media store, the same path as a channel's image); everything the gateway will not take is a 400
 * that names the part, and the model is never called for it.
 */

const TOKEN = "test-gateway-token";
const client = new OpenAI({
  baseURL: "https://edgeclaw.test/v1",
  apiKey: TOKEN,
  maxRetries: 0,
  fetch: (url, init) => SELF.fetch(url, init),
});
const PNG_URL = `data:image/png;base64,${RED_PNG_BASE64}`;

function post(content: unknown[]): Promise<Response> {
  return SELF.fetch("https://edgeclaw.test/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content }] }),
  });
}

async function refusal(
  response: Response,
): Promise<{ code: string; param: string; message: string }> {
  expect(response.status).toBe(400);
  return ((await response.json()) as { error: { code: string; param: string; message: string } })
    .error;
}

describe("/v1/chat/completions image_url", () => {
  it("an image_url data URL reaches the model as an image block with its bytes", async () => {
    const scenario = newScenario("oa-image");
    await script(scenario, [{ type: "text", text: "It is red." }]);
    const completion = await client.chat.completions.create({
      model: "openclaw",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: `what colour? [scenario:${scenario}]` },
            { type: "image_url", image_url: { url: PNG_URL } },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe("It is red.");
    const [request] = await recorded(scenario);
    const turn = { messages: [request!.body.messages.at(-1)] };
    expect(imagesOf("anthropic", turn)).toHaveLength(1);
    expect(turn.messages[0].content[0].source.data).toBe(RED_PNG_BASE64);
    expect(JSON.stringify(turn)).toContain("[Image: image-1.png");
  });

  it("refuses what it will not take with a 400 naming the part, and calls no model", async () => {
    const scenario = newScenario("oa-image-bad");
    const text = { type: "text", text: `look [scenario:${scenario}]` };
    const url = await refusal(
      await post([text, { type: "image_url", image_url: { url: "https://10.0.0.7/x.png" } }]),
    );
    expect(url).toMatchObject({ code: "image_url_not_allowed", param: "messages.0.content.1" });
    const wrong = await refusal(
      await post([
        text,
        { type: "image_url", image_url: { url: `data:image/png;base64,${toBase64(pdfBytes())}` } },
      ]),
    );
    expect(wrong.message).toContain("it is application/pdf");
    const type = await refusal(
      await post([text, { type: "image_url", image_url: "data:image/svg+xml;base64,PHN2Zz4=" }]),
    );
    expect(type.code).toBe("invalid_image");
    const many = await refusal(
      await post([
        text,
        ...Array.from({ length: 9 }, () => ({ type: "image_url", image_url: PNG_URL })),
      ]),
    );
    expect(many).toMatchObject({ code: "too_many_images", param: "messages.0.content.9" });
    const big = `data:image/png;base64,${"A".repeat(Math.ceil((6 * 1024 * 1024 * 4) / 3))}`;
    const large = await refusal(await post([text, { type: "image_url", image_url: big }]));
    expect(large.code).toBe("image_too_large");
    expect(await recorded(scenario)).toEqual([]);
  });

  it("a model without image input reads a description an image model made, and gets no pixels", async () => {
    const scenario = newScenario("oa-image-text-only");
    await script(scenario, [{ type: "text", text: "Described, thanks." }]);
    const response = await SELF.fetch("https://edgeclaw.test/v1/chat/completions", {
      method: "POST",
      headers: {
        authorization: `Bearer ${TOKEN}`,
        "content-type": "application/json",
        "x-openclaw-model": "fakeanthropic/claude-small",
      },
      body: JSON.stringify({
        model: "openclaw",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: `what is it? [scenario:${scenario}]` },
              { type: "image_url", image_url: { url: PNG_URL } },
            ],
          },
        ],
      }),
    });
    expect(response.status).toBe(200);
    const [request] = await recorded(scenario);
    expect(request!.body.model).toBe("claude-small");
    expect(imagesOf("anthropic", request!.body)).toEqual([]);
    const seen = JSON.stringify(request!.body);
    // The fake image model answers its default: "You said: <the describe prompt>".
    expect(seen).toContain(
      '[Description of the image \\"image-1.png\\" (machine-generated): You said: Describe this image',
    );
  });
});
