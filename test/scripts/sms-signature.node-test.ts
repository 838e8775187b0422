import assert from "node:assert/strict";
import { describe, it } from "node:test";
import twilio from "twilio";
import { signTwilioRequest } from "../../functions/channels/sms/verify.ts";

/**
 * The `twilio` package (Twilio's own Node library) as the oracle for the Worker's hand-written
 * signer: for many generated requests — repeated names, Unicode, `+` and `&` in values, empty values,
 * URLs with ports and queries — `getExpectedTwilioSignature` gives the same string, and
 * `validateRequest` accepts what the Worker would expect. (The Worker does not bundle `twilio`.)
 */

const alphabet = ["a", "Z", "0", "+", "&", "=", " ", "é", "☕", "%", "/", "_"];
function seeded(seed: number) {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

function generated(random: () => number): { url: string; params: Array<[string, string]> } {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const word = (min: number) =>
    Array.from({ length: min + Math.floor(random() * 6) }, () => pick(alphabet)).join("");
  const urls = [
    "https://gw.example.com/webhooks/sms",
    "https://gw.example.com:8443/webhooks/sms?acct=a%20b&x=1",
    "http://127.0.0.1:8787/webhooks/sms",
    "https://gw.example.com/webhooks/sms?q=é",
  ];
  const names = ["Body", "From", "To", "MessageSid", "NumMedia", "MediaUrl0", "body", "Z", "a_b"];
  const params: Array<[string, string]> = [];
  const count = 1 + Math.floor(random() * 8);
  for (let i = 0; i < count; i++) params.push([pick(names), word(0)]);
  return { url: pick(urls), params };
}

/** Params as the twilio library takes them: repeated names become arrays. */
function asObject(params: Array<[string, string]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of params) {
    const prior = out[key];
    out[key] =
      prior === undefined ? value : Array.isArray(prior) ? [...prior, value] : [prior, value];
  }
  return out;
}

describe("Twilio signatures against the twilio library", () => {
  it("matches getExpectedTwilioSignature and passes validateRequest for 300 generated requests", async () => {
    const random = seeded(20261130);
    for (let i = 0; i < 300; i++) {
      const { url, params } = generated(random);
      const token = `tok-${i}`;
      const ours = await signTwilioRequest(token, url, params);
      assert.equal(
        ours,
        twilio.getExpectedTwilioSignature(token, url, asObject(params)),
        `request ${i}: ${url} ${JSON.stringify(params)}`,
      );
      assert.ok(
        twilio.validateRequest(token, ours, url, asObject(params)),
        `request ${i} not valid for twilio`,
      );
    }
  });

  it("agrees on Twilio's published example", async () => {
    const params: Array<[string, string]> = [
      ["CallSid", "CA1234567890ABCDE"],
      ["Caller", "+12349013030"],
      ["Digits", "1234"],
      ["From", "+12349013030"],
      ["To", "+18005551212"],
    ];
    const url = "https://mycompany.com/myapp.php?foo=1&bar=2";
    assert.equal(await signTwilioRequest("12345", url, params), "0/KCTR6DLpKmkAf8muzZqo1nDgQ=");
    assert.equal(
      twilio.getExpectedTwilioSignature("12345", url, asObject(params)),
      "0/KCTR6DLpKmkAf8muzZqo1nDgQ=",
    );
  });
});
