import assert from "node:assert/strict";
import { describe, it } from "node:test";
import twilio from "twilio";
import { simulator as smsSimulator } from "../../functions/channels/sms/simulate/simulator.ts";

/**
 * The SMS simulator plays Twilio: its webhook passes Twilio's own validator (the `twilio` package)
 * for the URL Twilio would have signed, and the replies it reads are the messages the fake
 * Messages API received for that sender.
 */
describe("SMS simulator", () => {
  it("signs an incoming SMS as Twilio does and reads back the reply sent to that number", async () => {
    const fake = await smsSimulator.startFake();
    try {
      const prepared = smsSimulator.prepare({ dmPolicy: "pairing" }, fake.url, {});
      assert.equal(prepared.block.apiBaseUrl, fake.url);
      assert.equal(prepared.block.fromNumber, "+15005550006");
      assert.match(prepared.env.TWILIO_ACCOUNT_SID!, /^AC[0-9a-f]{32}$/);
      assert.ok(prepared.env.TWILIO_AUTH_TOKEN);
      const webhookUrl = "http://127.0.0.1:8787/webhooks/sms";
      const message = { from: "+15551110000", text: "hello there" };
      const request = await smsSimulator.webhook(message, {
        webhookUrl,
        secrets: prepared.secrets,
        fakeUrl: fake.url,
      });
      const params = Object.fromEntries(new URLSearchParams(await request.text()));
      assert.equal(params.From, "+15551110000");
      assert.equal(params.To, "+15005550006");
      assert.equal(params.Body, "hello there");
      assert.ok(
        twilio.validateRequest(
          prepared.env.TWILIO_AUTH_TOKEN!,
          request.headers.get("x-twilio-signature")!,
          webhookUrl,
          params,
        ),
      );

      assert.deepEqual(await smsSimulator.replies(fake.url, message), []);
      // What the Worker does to answer: the Messages API with the account's Basic credentials.
      const sid = prepared.env.TWILIO_ACCOUNT_SID!;
      const sent = await fetch(`${fake.url}/2010-04-01/Accounts/${sid}/Messages.json`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${sid}:${prepared.env.TWILIO_AUTH_TOKEN}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({
          To: "+15551110000",
          From: "+15005550006",
          Body: "hi back",
        }).toString(),
      });
      assert.equal(sent.status, 201);
      assert.deepEqual(await smsSimulator.replies(fake.url, message), ["hi back"]);
    } finally {
      await fake.stop();
    }
  });

  it("signs over publicWebhookUrl when the block names one, and keeps secrets the env already has", async () => {
    const fake = await smsSimulator.startFake();
    try {
      const env = { TWILIO_ACCOUNT_SID: `AC${"1".repeat(32)}`, TWILIO_AUTH_TOKEN: "from-dev-vars" };
      const prepared = smsSimulator.prepare(
        { fromNumber: "+15550001234", publicWebhookUrl: "https://sms.example.com/hook?x=1" },
        fake.url,
        env,
      );
      assert.deepEqual(prepared.env, {});
      const request = await smsSimulator.webhook(
        { text: "x" },
        {
          webhookUrl: "http://127.0.0.1:8787/webhooks/sms",
          secrets: prepared.secrets,
          fakeUrl: fake.url,
        },
      );
      const params = Object.fromEntries(new URLSearchParams(await request.text()));
      assert.equal(params.To, "+15550001234");
      assert.ok(
        twilio.validateRequest(
          "from-dev-vars",
          request.headers.get("x-twilio-signature")!,
          "https://sms.example.com/hook?x=1",
          params,
        ),
      );
    } finally {
      await fake.stop();
    }
  });
});
