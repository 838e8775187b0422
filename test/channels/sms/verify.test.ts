import { describe, expect, it } from "vitest";
import {
  signedString,
  signTwilioRequest,
  verifyTwilioSignature,
} from "../../../functions/channels/sms/verify.ts";

// The worked example on Twilio's "Secure webhooks" page (auth token 12345).
const DOC_TOKEN = "12345";
const DOC_URL = "https://mycompany.com/myapp.php?foo=1&bar=2";
const DOC_PARAMS: Array<[string, string]> = [
  ["CallSid", "CA1234567890ABCDE"],
  ["Caller", "+12349013030"],
  ["Digits", "1234"],
  ["From", "+12349013030"],
  ["To", "+18005551212"],
];
const DOC_SIGNATURE = "0/KCTR6DLpKmkAf8muzZqo1nDgQ=";

const headers = (signature?: string, extra: Record<string, string> = {}) => {
  const h = new Headers(extra);
  if (signature !== undefined) h.set("X-Twilio-Signature", signature);
  return h;
};
const verify = (
  signature: string | undefined,
  url = DOC_URL,
  params = DOC_PARAMS,
  authToken: string = DOC_TOKEN,
  extra?: Record<string, string>,
) => verifyTwilioSignature({ headers: headers(signature, extra), params, url, authToken });

describe("Twilio request signatures", () => {
  it("reproduces Twilio's published example signature", async () => {
    expect(await signTwilioRequest(DOC_TOKEN, DOC_URL, DOC_PARAMS)).toBe(DOC_SIGNATURE);
  });

  it("accepts the published example, whatever order the parameters arrived in", async () => {
    expect(await verify(DOC_SIGNATURE, DOC_URL, [...DOC_PARAMS].reverse())).toEqual({ ok: true });
  });

  it("signs the URL followed by the parameters sorted by name, without separators", () => {
    expect(
      signedString("https://x.test/a?q=1", [
        ["b", "2"],
        ["a", "1"],
        ["B", "3"],
      ]),
    ).toBe("https://x.test/a?q=1B3a1b2");
  });

  it("rejects a changed parameter, an added one and a removed one", async () => {
    expect(
      await verify(
        DOC_SIGNATURE,
        DOC_URL,
        DOC_PARAMS.map(([k, v]) => [k, k === "Digits" ? "9999" : v]),
      ),
    ).toEqual({ ok: false, reason: "bad-signature" });
    expect(await verify(DOC_SIGNATURE, DOC_URL, [...DOC_PARAMS, ["Body", "hi"]])).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(await verify(DOC_SIGNATURE, DOC_URL, DOC_PARAMS.slice(1))).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });

  it("rejects another URL: another host, path or query", async () => {
    for (const url of [
      "https://evil.example/myapp.php?foo=1&bar=2",
      "https://mycompany.com/other.php?foo=1&bar=2",
      "https://mycompany.com/myapp.php?foo=1&bar=3",
      "http://mycompany.com/myapp.php?foo=1&bar=2",
    ]) {
      expect(await verify(DOC_SIGNATURE, url)).toEqual({ ok: false, reason: "bad-signature" });
    }
  });

  it("accepts the URL with the default port added or removed, and ignores a connection-override fragment", async () => {
    expect(await verify(DOC_SIGNATURE, "https://mycompany.com:443/myapp.php?foo=1&bar=2")).toEqual({
      ok: true,
    });
    expect(await verify(DOC_SIGNATURE, `${DOC_URL}#rc=3&rp=5xx`)).toEqual({ ok: true });
    const withPort = await signTwilioRequest(
      DOC_TOKEN,
      "https://mycompany.com:443/myapp.php?foo=1&bar=2",
      DOC_PARAMS,
    );
    expect(await verify(withPort, DOC_URL)).toEqual({ ok: true });
    expect(await verify(DOC_SIGNATURE, "https://mycompany.com:8443/myapp.php?foo=1&bar=2")).toEqual(
      { ok: false, reason: "bad-signature" },
    );
  });

  it("rejects the wrong auth token, a missing header, a truncated signature, and never opens without a token", async () => {
    expect(await verify(DOC_SIGNATURE, DOC_URL, DOC_PARAMS, "54321")).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(await verify(undefined)).toEqual({ ok: false, reason: "missing-signature" });
    expect(await verify(DOC_SIGNATURE.slice(0, -1))).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(
      await verifyTwilioSignature({
        headers: headers(DOC_SIGNATURE),
        params: DOC_PARAMS,
        url: DOC_URL,
        authToken: undefined,
      }),
    ).toEqual({ ok: false, reason: "no-secret" });
  });

  it("refuses a SharedKey signature (Webhook Settings) it has no key for", async () => {
    expect(
      await verify(DOC_SIGNATURE, DOC_URL, DOC_PARAMS, DOC_TOKEN, {
        "X-Twilio-Webhooks-Signature-Settings": "key=webhooks_sharedkey_1,algorithm=HMAC_SHA256",
      }),
    ).toEqual({
      ok: false,
      reason: "unsupported-signature-settings",
    });
  });
});
