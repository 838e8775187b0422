import { describe, expect, it } from "vitest";
import {
  forgetPairingWhenDone,
  inboundSms,
  newScenario,
  postTwilio,
  recorded,
  scriptModel,
  scriptTwilio,
  settle,
  strangerNumber,
  TEST_TWILIO,
  twilioCalls,
  twilioMedia,
  twilioMessages,
  waitFor,
} from "./helpers.ts";

/**
 * Signed Twilio webhook → Worker → durable accept in the SessionDO → access control → agent run
 * against the fake model → reply through the fake Twilio Messages API, with the defaults a user gets
 * (dmPolicy "pairing", dmScope "main", textChunkLimit 1500). Each test talks from its own number.
 */

const allowed = (i: number) => TEST_TWILIO.allowed[i]!;

/** Waits until exactly `texts` were sent to `to`, then checks it stays so. */
async function settlesTo(to: string, texts: string[]) {
  await waitFor(async () =>
    JSON.stringify((await twilioMessages(to)).map((m) => m.body)) === JSON.stringify(texts)
      ? true
      : undefined,
  ).catch(async () => {
    throw new Error(
      `sent ${JSON.stringify((await twilioMessages(to)).map((m) => m.body))}, expected ${JSON.stringify(texts)}`,
    );
  });
  await settle(1500);
  const messages = await twilioMessages(to);
  expect(messages.map((m) => m.body)).toEqual(texts);
  return messages;
}

describe("Twilio SMS end to end", () => {
  it("answers an allowlisted number once, from the account's number, even when Twilio delivers the SMS three times", async () => {
    const from = allowed(1);
    const scenario = newScenario("sms-hello");
    await scriptModel(scenario, [
      { type: "tool_calls", calls: [{ name: "session_status", arguments: {} }] },
      { type: "text", text: "All **good**: see [status](https://status.example.com)." },
    ]);
    const params = inboundSms({ from, body: `status please [scenario:${scenario}]` });
    const deliveries = await Promise.all([
      postTwilio(params),
      postTwilio(params),
      postTwilio(params),
    ]);
    expect(deliveries.map((r) => r.status)).toEqual([200, 200, 200]);
    const [reply] = await settlesTo(from, ["All good: see status (https://status.example.com)."]);
    expect(reply!.from).toBe(TEST_TWILIO.fromNumber);
    expect(await twilioCalls("messages.create", from)).toHaveLength(1);
  });

  it("waits out a 429 on the first send and still sends once", async () => {
    const from = allowed(2);
    const scenario = newScenario("sms-429");
    await scriptModel(scenario, [{ type: "text", text: "Sent after the rate limit." }]);
    await scriptTwilio({ method: "messages.create", to: from, status: 429, code: 20429 });
    expect((await postTwilio(inboundSms({ from, body: `hi [scenario:${scenario}]` }))).status).toBe(
      200,
    );
    await settlesTo(from, ["Sent after the rate limit."]);
    expect(await twilioCalls("messages.create", from)).toHaveLength(2);
  });

  it("does not send twice when the message landed but Twilio's answer was lost", async () => {
    const from = allowed(3);
    const scenario = newScenario("sms-lost");
    await scriptModel(scenario, [{ type: "text", text: "Only once." }]);
    await scriptTwilio({ method: "messages.create", to: from, dropConnection: true });
    await postTwilio(inboundSms({ from, body: `hi [scenario:${scenario}]` }));
    await waitFor(async () =>
      (await twilioCalls("messages.list")).some((c) => c.args.To === from) ? true : undefined,
    );
    await settlesTo(from, ["Only once."]);
    expect(await twilioCalls("messages.create", from)).toHaveLength(1);
  });

  it("reads a text MMS attachment, downloaded with the account's credentials", async () => {
    const from = allowed(4);
    const scenario = newScenario("sms-mms");
    await scriptModel(scenario, [{ type: "text", text: "Got your note." }]);
    const url = await twilioMedia({
      content: "shopping: eggs, flour, MEDIA-MARKER-7781",
      contentType: "text/plain",
    });
    await postTwilio(
      inboundSms({
        from,
        body: `read this [scenario:${scenario}]`,
        media: [{ url, contentType: "text/plain" }],
      }),
    );
    await settlesTo(from, ["Got your note."]);
    const [request] = await recorded(scenario);
    expect(JSON.stringify(request!.body)).toContain("MEDIA-MARKER-7781");
  });

  it("gives STOP no agent reply and no model call", async () => {
    const from = allowed(5);
    const scenario = newScenario("sms-stop");
    await scriptModel(scenario, [{ type: "text", text: "must never be sent" }]);
    expect((await postTwilio(inboundSms({ from, body: "STOP" }))).status).toBe(200);
    expect((await postTwilio(inboundSms({ from, body: " stop " }))).status).toBe(200);
    await settle(2000);
    expect(await twilioMessages(from)).toHaveLength(0);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("answers a stranger with one pairing code by SMS, and the model never sees the messages", async () => {
    const from = strangerNumber();
    forgetPairingWhenDone(from);
    const scenario = newScenario("sms-stranger");
    await scriptModel(scenario, [{ type: "text", text: "must never be sent" }]);
    await postTwilio(inboundSms({ from, body: `hello? [scenario:${scenario}]` }));
    const [notice] = await waitFor(async () => {
      const sent = await twilioMessages(from);
      return sent.length ? sent : undefined;
    });
    expect(notice!.body).toContain("Pairing code:");
    expect(notice!.body).not.toMatch(/\*\*|`/);
    await postTwilio(inboundSms({ from, body: `hello again [scenario:${scenario}]` }));
    await settle(1500);
    expect(await twilioMessages(from)).toHaveLength(1);
    expect(await recorded(scenario)).toHaveLength(0);
  });

  it("admits a number listed as twilio-sms:+1 (555) … in allowFrom", async () => {
    const from = TEST_TWILIO.allowed.at(-1)!;
    const scenario = newScenario("sms-normalised");
    await scriptModel(scenario, [{ type: "text", text: "You are on the list." }]);
    await postTwilio(inboundSms({ from, body: `hi [scenario:${scenario}]` }));
    await settlesTo(from, ["You are on the list."]);
  });
});
