import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../../workers/env.ts";
import { toBase64 } from "../../../functions/media/parts.ts";
import { documentsOf } from "../../fakes/model-images.ts";
import { imageOnlyPdf, textPdf } from "../../fixtures/media/pdf.ts";
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
 * A PDF a sender shares on Slack: downloaded with the bot token after access control, kept in the
 * media store, its text read through Workers AI's toMarkdown (the suite's `AI` binding is a fake
 * that converts real PDF bytes: test/fakes/markdown-conversion.ts) and fenced as the sender's
 * attachment. A PDF without text reaches the Anthropic model as the file itself.
 */

const testEnv = env as unknown as Env;

async function serve(path: string, bytes: Uint8Array): Promise<string> {
  const res = await fetch(`${String(testEnv.FAKE_SLACK_URL)}/_control/file`, {
    method: "POST",
    body: JSON.stringify({ path, contentBase64: toBase64(bytes), contentType: "application/pdf" }),
  });
  return ((await res.json()) as { url: string }).url;
}

async function sharePdf(scenario: string, name: string, bytes: Uint8Array, size?: number) {
  const url = await serve(`/files/${uniqueId("F")}/${name}`, bytes);
  const channel = uniqueId("D");
  const body = messageEvent({
    eventId: uniqueId("Ev"),
    channel,
    channelType: "im",
    text: `what does it say? [scenario:${scenario}]`,
    ts: `${Math.floor(Date.now() / 1000)}.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`,
    extra: {
      subtype: "file_share",
      files: [
        {
          id: "F1",
          name,
          mimetype: "application/pdf",
          size: size ?? bytes.byteLength,
          url_private: url,
        },
      ],
    },
  });
  expect((await postSigned(body)).status).toBe(200);
  await waitFor(async () => ((await slackMessages(channel)).length ? true : undefined));
  const [request] = await recorded(scenario);
  return { turn: request!.body.messages.at(-1), url };
}

async function conversions(name: string) {
  return (await recorded("workers-ai:tomarkdown")).filter((call) =>
    // The part's name carries the platform's file id: "<name> (Slack file F1)".
    (call.body.names as string[]).some((sent) => sent.startsWith(name)),
  );
}

describe("Slack PDFs", () => {
  it("reads a PDF's text through toMarkdown and fences it as the sender's attachment; the file stays out of the request", async () => {
    const scenario = newScenario("slack-pdf-text");
    await scriptModel(scenario, [{ type: "text", text: "Revenue was 42." }]);
    const name = `${uniqueId("report")}.pdf`;
    const pdf = textPdf([["Quarterly report", "Revenue (EUR): 42 million"], ["Outlook: steady"]]);
    const { turn } = await sharePdf(scenario, name, pdf);
    const text = JSON.stringify(turn.content);
    expect(text).toContain(`text of the document`);
    expect(text).toContain("Revenue (EUR): 42 million");
    expect(text).toContain("Outlook: steady");
    expect(text).not.toContain("%PDF");
    expect(documentsOf({ messages: [turn] })).toEqual([]);
    const [conversion] = await conversions(name);
    // Slack's name carries the file id after it; the converter is still handed a ".pdf" name.
    expect(conversion!.body.names).toEqual([expect.stringMatching(/\.pdf$/)]);
    expect(conversion!.body.options).toEqual({ conversionOptions: { pdf: { metadata: false } } });
    const stored = await testEnv.MEDIA!.list({ prefix: "media/" });
    expect(stored.objects.map((object) => object.size)).toContain(pdf.byteLength);
  });

  it("gives an Anthropic model a PDF without text as the file itself, and says why there is no text", async () => {
    const scenario = newScenario("slack-pdf-scan");
    await scriptModel(scenario, [{ type: "text", text: "A blue rectangle." }]);
    const name = `${uniqueId("scan")}.pdf`;
    const pdf = imageOnlyPdf();
    const { turn } = await sharePdf(scenario, name, pdf);
    const [document] = documentsOf({ messages: [turn] });
    expect(document!.bytes).toBe(pdf.byteLength);
    expect(document!.title).toMatch(new RegExp(`^${name}`));
    expect(document!.latin1).toContain("72 500 300 200 re f");
    const text = JSON.stringify(turn.content);
    expect(text).toContain("text not read: the PDF has no text layer");
    expect(text).toContain("the PDF itself is attached below");
    // The document block leads the user turn, before the text that refers to it.
    expect(turn.content[0].type).toBe("document");
  });

  it("a PDF the converter refuses is still kept and read natively; one declared over pdfMaxMb is never downloaded", async () => {
    const scenario = newScenario("slack-pdf-bad");
    await scriptModel(scenario, [{ type: "text", text: "ok" }]);
    const name = `${uniqueId("cut")}.pdf`;
    const whole = textPdf([["cut short"]]);
    const cut = whole.subarray(0, whole.byteLength - 20);
    const { turn } = await sharePdf(scenario, name, cut);
    expect(JSON.stringify(turn.content)).toContain(
      "Workers AI could not convert it: Failed to parse PDF",
    );
    expect(documentsOf({ messages: [turn] }).map((doc) => doc.bytes)).toEqual([cut.byteLength]);

    const big = newScenario("slack-pdf-big");
    await scriptModel(big, [{ type: "text", text: "ok" }]);
    const bigName = `${uniqueId("big")}.pdf`;
    const { turn: bigTurn, url } = await sharePdf(big, bigName, whole, 11 * 1024 * 1024);
    expect(JSON.stringify(bigTurn.content)).toMatch(/not downloaded: over|over the size limit/);
    expect(documentsOf({ messages: [bigTurn] })).toEqual([]);
    expect(await conversions(bigName)).toEqual([]);
    const downloads = (await slackCalls("files.download")).filter((call) =>
      url.endsWith(String(call.args.path)),
    );
    expect(downloads).toEqual([]);
  });
});
