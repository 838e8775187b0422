import { describe, expect, it } from "vitest";
import { validateSignature } from "@line/bot-sdk";
import { signLineBody, verifyLineSignature } from "../../../functions/channels/line/verify.ts";

/**
 * X-Line-Signature = base64(HMAC-SHA256(channel secret, raw body)). LINE's docs publish the recipe,
 * not a vector; the vector below is the one in LINE's own SDK tests (line-bot-sdk-nodejs,
 * test/validate-signature.spec.ts), and @line/bot-sdk's validateSignature is the oracle for bodies
 * built here (it runs in workerd under nodejs_compat).
 */

const encoder = new TextEncoder();

describe("LINE signature", () => {
  it("accepts the signature from LINE's SDK test vector", async () => {
    const body = encoder.encode(JSON.stringify({ hello: "world" }));
    expect(
      await verifyLineSignature(
        body,
        "t7Hn4ZDHqs6e+wdvI5TyQIvzie0DmMUmuXEBqyyE/tM=",
        "test_secret",
      ),
    ).toEqual({ ok: true });
    expect(await signLineBody("test_secret", body)).toBe(
      "t7Hn4ZDHqs6e+wdvI5TyQIvzie0DmMUmuXEBqyyE/tM=",
    );
    // The SDK's "failure" vector: two letters' case flipped.
    expect(
      await verifyLineSignature(
        body,
        "t7Hn4ZDHqs6e+wdvi5TyQivzie0DmMUmuXEBqyyE/tM=",
        "test_secret",
      ),
    ).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("signs exactly as @line/bot-sdk validates, over raw bytes including multi-byte text", async () => {
    const bodies = [
      JSON.stringify({ destination: `U${"f".repeat(32)}`, events: [] }),
      JSON.stringify({
        destination: "Uabc",
        events: [
          { type: "message", message: { type: "text", text: 'こんにちは 👋 "quoted" \\ back' } },
        ],
      }),
      '{"destination":"U1",  "events" : []}\n',
    ];
    for (const body of bodies) {
      const signature = await signLineBody("channel-secret-ü", body);
      expect(validateSignature(body, "channel-secret-ü", signature)).toBe(true);
      expect(
        await verifyLineSignature(encoder.encode(body), signature, "channel-secret-ü"),
      ).toEqual({ ok: true });
    }
  });

  it("rejects a body changed after signing, a re-serialised body, another secret and junk", async () => {
    const body = '{"destination":"U1","events":[ ]}';
    const signature = await signLineBody("s3cret", body);
    expect(
      (await verifyLineSignature(encoder.encode(body.replace("[ ]", "[]")), signature, "s3cret"))
        .ok,
    ).toBe(false);
    expect(
      (
        await verifyLineSignature(
          encoder.encode(JSON.stringify(JSON.parse(body))),
          signature,
          "s3cret",
        )
      ).ok,
    ).toBe(false);
    expect(await verifyLineSignature(encoder.encode(body), signature, "other")).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    expect(validateSignature(body, "other", signature)).toBe(false);
    for (const junk of ["", "not base64!", "AAAA", signature.slice(0, -4), `${signature}AAAA`]) {
      expect((await verifyLineSignature(encoder.encode(body), junk, "s3cret")).ok).toBe(false);
    }
  });

  it("fails closed without a secret or without the header", async () => {
    const body = encoder.encode("{}");
    expect(await verifyLineSignature(body, await signLineBody("x", "{}"), undefined)).toEqual({
      ok: false,
      reason: "no-secret",
    });
    expect(await verifyLineSignature(body, await signLineBody("x", "{}"), "")).toEqual({
      ok: false,
      reason: "no-secret",
    });
    expect(await verifyLineSignature(body, null, "s3cret")).toEqual({
      ok: false,
      reason: "missing-signature",
    });
  });
});
