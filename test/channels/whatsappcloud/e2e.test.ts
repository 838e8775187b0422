import { describe, expect, it } from "vitest";
import { recorded } from "../../agent/model-helpers.ts";
import {
  BIZ_NUMBER,
  DEFAULT_NUMBER,
  TEST_WHATSAPP_CLOUD,
  forgetPairingWhenDone,
  graphCalls,
  graphMessages,
  newScenario,
  postWhatsApp,
  scriptGraph,
  scriptModel,
  serveMedia,
  settle,
  textMessage,
  waId,
  waMessage,
  waitFor,
  webhookBody,
} from "./helpers.ts";

/**
 * Signed Cloud API webhook → Worker → durable accept → agent run against the fake model → reply
 * through the fake Graph API. "biz" has open DMs and replyToMode "first"; the default account
 * pairs unknown senders (functions/channels/whatsappcloud/test-kit.ts).
 */

/** Waits until `to` shows exactly `texts`, then checks it stays so. */
async function settlesTo(to: string, texts: string[]) {
  await waitFor(async () =>
    JSON.stringify((await graphMessages(to)).map((m) => m.text)) === JSON.stringify(texts)
      ? true
      : undefined,
  ).catch(async () => {
    throw new Error(
      `WhatsApp shows ${JSON.stringify((await graphMessages(to)).map((m) => m.text))} to ${to}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  const messages = await graphMessages(to);
  expect(messages.map((m) => m.text)).toEqual(texts);
  return messages;
}

describe("WhatsApp Cloud API end to end", () => {
  it("a signed text DM gets one reply, quoting it, from the number it was sent to; read receipt and typing first; a redelivery changes nothing", async () => {
    const user = waId();
    const scenario = newScenario("wa-dm");
    await scriptModel(scenario, [{ type: "text", text: "Hello **there**, ~~no~~ *yes*." }]);
    const message = textMessage(user, `hi [scenario:${scenario}]`);
    const body = webhookBody(BIZ_NUMBER, { messages: [message] });
    const deliveries = await Promise.all([postWhatsApp(body), postWhatsApp(body)]);
    expect(deliveries.map((r) => r.status)).toEqual([200, 200]);
    expect(deliveries.map((r) => r.headers.get("x-edgeclaw-ingest")).sort()).toEqual([
      "accepted",
      "duplicate",
    ]);
    const [reply] = await settlesTo(user, ["Hello *there*, ~no~ _yes_."]);
    expect(reply!.phoneNumberId).toBe(TEST_WHATSAPP_CLOUD.bizPhoneNumberId);
    expect(reply!.recipientType).toBe("individual");
    expect(reply!.contextId).toBe(message.id);
    const reads = (await graphCalls("read")).filter((c) => c.body.message_id === message.id);
    expect(reads.some((c) => !c.body.typing_indicator)).toBe(true);
    expect(reads.some((c) => JSON.stringify(c.body.typing_indicator) === '{"type":"text"}')).toBe(
      true,
    );
    expect(reads.every((c) => c.token === "…-biz")).toBe(true);
    expect(await recorded(scenario)).toHaveLength(1);

    // Meta redelivers the same wamid later: still one reply, no second run.
    expect((await postWhatsApp(body)).headers.get("x-edgeclaw-ingest")).toBe("duplicate");
    await settle(1000);
    expect((await graphMessages(user)).map((m) => m.text)).toHaveLength(1);
    expect(await recorded(scenario)).toHaveLength(1);
  });

  it("with the defaults, a stranger gets one pairing code and the model is never called", async () => {
    const user = waId();
    forgetPairingWhenDone(`+${user}`);
    const scenario = newScenario("wa-stranger");
    await postWhatsApp(
      webhookBody(DEFAULT_NUMBER, {
        messages: [textMessage(user, `hello [scenario:${scenario}]`)],
      }),
      DEFAULT_NUMBER,
    );
    const code = await waitFor(async () => (await graphMessages(user))[0]);
    expect(code.text).toContain("Pairing code:");
    expect(code.phoneNumberId).toBe(TEST_WHATSAPP_CLOUD.phoneNumberId);
    await settle(1000);
    expect(await graphMessages(user)).toHaveLength(1);
    expect(await recorded(scenario)).toEqual([]);
  });

  it("hands a document's text and an image's caption to the model (media downloaded with the token after access)", async () => {
    const user = waId();
    const scenario = newScenario("wa-media");
    await scriptModel(scenario, [{ type: "text", text: "Read it." }]);
    const mediaId = `${Date.now()}${Math.floor(Math.random() * 1000)}`;
    await serveMedia(mediaId, { content: "the quarterly numbers are 42", mimeType: "text/plain" });
    const document = waMessage(user, "document", {
      document: {
        id: mediaId,
        mime_type: "text/plain",
        filename: "numbers.txt",
        caption: `what is in here? [scenario:${scenario}]`,
      },
    });
    await postWhatsApp(webhookBody(BIZ_NUMBER, { messages: [document] }));
    await settlesTo(user, ["Read it."]);
    const [request] = await recorded(scenario);
    const seen = JSON.stringify(request!.body);
    expect(seen).toContain("the quarterly numbers are 42");
    expect(seen).toContain("<media:document>");
    expect(seen).toContain("what is in here?");
    const lookups = (await graphCalls("media")).filter((c) => c.token === "…-biz");
    expect(lookups.length).toBeGreaterThanOrEqual(2); // the media node, then the download
  });

  it("a send Meta refuses for a while (131000, then throttled 130429) is retried and lands once", async () => {
    const user = waId();
    const scenario = newScenario("wa-transient");
    await scriptModel(scenario, [{ type: "text", text: "After the hiccup." }]);
    await scriptGraph({ api: "send", to: user, status: 500, code: 131000 });
    await scriptGraph({ api: "send", to: user, status: 400, code: 130429 });
    await postWhatsApp(
      webhookBody(BIZ_NUMBER, { messages: [textMessage(user, `hi [scenario:${scenario}]`)] }),
    );
    await settlesTo(user, ["After the hiccup."]);
    const sends = (await graphCalls("send")).filter((c) => c.to === user);
    expect(sends.map((c) => c.status)).toEqual([500, 400, 200]);
  });

  it("a send Meta refuses for good (131047, outside the 24-hour window) is not repeated", async () => {
    const user = waId();
    const scenario = newScenario("wa-permanent");
    await scriptModel(scenario, [{ type: "text", text: "Never shown." }]);
    await scriptGraph({ api: "send", to: user, status: 400, code: 131047, times: 5 });
    await postWhatsApp(
      webhookBody(BIZ_NUMBER, { messages: [textMessage(user, `hi [scenario:${scenario}]`)] }),
    );
    await waitFor(async () =>
      (await graphCalls("send")).some((c) => c.to === user) ? true : undefined,
    );
    await settle(3000);
    const sends = (await graphCalls("send")).filter((c) => c.to === user);
    expect(sends.map((c) => c.status)).toEqual([400]);
    expect(await graphMessages(user)).toEqual([]);
  });

  it("a reply whose answer was lost is never sent again blindly: one answer, one notice", async () => {
    const user = waId();
    const scenario = newScenario("wa-lost");
    await scriptModel(scenario, [{ type: "text", text: "Only once." }]);
    await scriptGraph({ api: "send", to: user, dropConnection: true });
    await postWhatsApp(
      webhookBody(BIZ_NUMBER, { messages: [textMessage(user, `hi [scenario:${scenario}]`)] }),
    );
    await waitFor(async () => ((await graphMessages(user)).length >= 2 ? true : undefined));
    await settle(1500);
    const texts = (await graphMessages(user)).map((m) => m.text);
    expect(texts.filter((text) => text === "Only once.")).toHaveLength(1);
    expect(texts).toHaveLength(2);
    expect(texts[1]).toContain("may not have arrived");
  });

  it("in a listed group answers to the group; in the members-only group a stranger is ignored", async () => {
    const user = waId();
    const scenario = newScenario("wa-group");
    await scriptModel(scenario, [{ type: "text", text: "Hi group." }]);
    const inGroup = { group_id: TEST_WHATSAPP_CLOUD.groupOpen };
    await postWhatsApp(
      webhookBody(BIZ_NUMBER, {
        messages: [textMessage(user, `hello all [scenario:${scenario}]`, inGroup)],
      }),
    );
    const sent = await waitFor(async () =>
      (await graphMessages(TEST_WHATSAPP_CLOUD.groupOpen)).find((m) => m.text === "Hi group."),
    );
    expect(sent.recipientType).toBe("group");

    const ignored = newScenario("wa-group-stranger");
    await postWhatsApp(
      webhookBody(BIZ_NUMBER, {
        messages: [
          textMessage(waId(), `me too [scenario:${ignored}]`, {
            group_id: TEST_WHATSAPP_CLOUD.groupMembers,
          }),
        ],
      }),
    );
    await settle(1500);
    expect(await recorded(ignored)).toEqual([]);
    expect(await graphMessages(TEST_WHATSAPP_CLOUD.groupMembers)).toEqual([]);
  });
});
