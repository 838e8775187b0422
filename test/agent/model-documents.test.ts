import { describe, expect, it } from "vitest";
import { callModel, type CallModelArgs } from "../../functions/agent/model-call.ts";
import {
  DOCUMENT_REMOVED_NOTE,
  DOCUMENT_STRIPPED_NOTICE,
  DOCUMENT_TURNS_KEPT,
} from "../../functions/agent/document-request.ts";
import { UNMETERED } from "../../functions/agent/metering.ts";
import type { Message } from "../../functions/agent/types.ts";
import type { MediaPart } from "../../functions/media/parts.ts";
import { documentsOf } from "../fakes/model-images.ts";
import { imageOnlyPdf } from "../fixtures/media/pdf.ts";
import {
  newScenario,
  recorded,
  recordingSleep,
  script,
  suiteConfig,
  testEnv,
} from "./model-helpers.ts";

/**
 * PDFs to the model through callModel and the fake model server, which refuses a document block
 * a real Anthropic API would refuse (test/fakes/model-images.ts): a PDF without text goes as the
 * file to an Anthropic model only, for the last few turns; a PDF with text never goes as a file;
 * a provider 400 about the document is retried once without it.
 */

const store = new Map<string, Uint8Array>();
const load = async (ref: string) => store.get(ref);

function pdfPart(ref: string, bytes: Uint8Array, text?: string): MediaPart {
  store.set(ref, bytes);
  return {
    kind: "document",
    ref,
    mimeType: "application/pdf",
    sizeBytes: bytes.byteLength,
    name: "scan.pdf",
    ...(text !== undefined ? { text } : {}),
  };
}

function pdfTurn(scenario: string, ref: string, bytes = imageOnlyPdf(), text?: string): Message {
  return {
    role: "user",
    content: `what is in it? [scenario:${scenario}]`,
    media: [pdfPart(ref, bytes, text)],
  };
}

function args(model: string, messages: Message[], extra: Partial<CallModelArgs> = {}) {
  return {
    config: suiteConfig,
    env: testEnv,
    selection: { primary: model, fallbacks: [] },
    request: { system: "sys", messages, tools: [] },
    meter: UNMETERED,
    sleep: recordingSleep().sleep,
    loadMedia: load,
    ...extra,
  } satisfies CallModelArgs;
}

describe("PDFs to the model", () => {
  it("sends Anthropic a PDF without text as a base64 document block with its title, before the text", async () => {
    const scenario = newScenario("pdf-anthropic");
    await script(scenario, [{ type: "text", text: "a blue rectangle" }]);
    const pdf = imageOnlyPdf();
    await callModel(args("fakeanthropic/claude-test", [pdfTurn(scenario, `a/${scenario}`, pdf)]));
    const [request] = await recorded(scenario);
    const content = request!.body.messages[0].content;
    expect(content[0]).toMatchObject({
      type: "document",
      title: "scan.pdf",
      source: { type: "base64", media_type: "application/pdf" },
    });
    expect(documentsOf(request!.body)).toMatchObject([{ bytes: pdf.byteLength }]);
    expect(content.at(-1).text).toContain("the PDF itself is attached below");
  });

  it("never sends the file to an OpenAI-compatible model, nor a PDF whose text was read", async () => {
    const openai = newScenario("pdf-openai");
    await script(openai, [{ type: "text", text: "ok" }]);
    await callModel(args("fakeopenai/gpt-test", [pdfTurn(openai, `o/${openai}`)]));
    const [toOpenAi] = await recorded(openai);
    expect(JSON.stringify(toOpenAi!.body)).not.toContain("JVBERi0"); // base64 of "%PDF-"
    const read = newScenario("pdf-read");
    await script(read, [{ type: "text", text: "ok" }]);
    await callModel(
      args("fakeanthropic/claude-test", [pdfTurn(read, `r/${read}`, undefined, "Page text")]),
    );
    const [withText] = await recorded(read);
    expect(documentsOf(withText!.body)).toEqual([]);
  });

  it(`keeps the file for the last ${DOCUMENT_TURNS_KEPT} PDF turns only; older ones say it was read`, async () => {
    const scenario = newScenario("pdf-replay");
    await script(scenario, [{ type: "text", text: "ok" }]);
    const turns: Message[] = [];
    for (let i = 0; i < DOCUMENT_TURNS_KEPT + 2; i++) {
      turns.push(pdfTurn(scenario, `p/${scenario}/${i}`));
      turns.push({ role: "assistant", content: `seen ${i}` });
    }
    turns.pop();
    await callModel(args("fakeanthropic/claude-test", turns));
    const [request] = await recorded(scenario);
    expect(documentsOf(request!.body)).toHaveLength(DOCUMENT_TURNS_KEPT);
    expect(JSON.stringify(request!.body).split(DOCUMENT_REMOVED_NOTE).length - 1).toBe(2);
  });

  it("on a provider 400 about the document, retries once without it and says so", async () => {
    const scenario = newScenario("pdf-refused");
    await script(scenario, [{ type: "text", text: "answered without it" }]);
    const notices: string[] = [];
    const notPdf = new TextEncoder().encode("this is not a PDF at all");
    const result = await callModel(
      args("fakeanthropic/claude-test", [pdfTurn(scenario, `x/${scenario}`, notPdf)], {
        onNotice: (text) => notices.push(text),
      }),
    );
    expect(result.text).toBe("answered without it");
    expect(notices).toEqual([DOCUMENT_STRIPPED_NOTICE]);
    const requests = await recorded(scenario);
    expect(requests).toHaveLength(2);
    expect(documentsOf(requests[1]!.body)).toEqual([]);
    expect(JSON.stringify(requests[1]!.body)).toContain("not shown: the model refused it");
  });
});
