import { describe, expect, it } from "vitest";
import { classifyError } from "../../../functions/core/classify-error.ts";
import { graphError, sendResultOf } from "../../../functions/channels/whatsappcloud/api.ts";
import { markdownToWhatsApp } from "../../../functions/channels/whatsappcloud/format.ts";
import { reconcileWhatsAppCloud } from "../../../functions/channels/whatsappcloud/send.ts";
import { signHubBody, signedWith } from "../../../functions/channels/whatsappcloud/verify.ts";

/** The pieces under the end-to-end tests: error classes by Meta's code, formatting, signatures. */

const body = (code: number, extra: Record<string, unknown> = {}) => ({
  error: { message: `(#${code}) some title`, type: "OAuthException", code, ...extra },
});

describe("WhatsApp Cloud API errors", () => {
  it("are classed by Meta's code and the HTTP status, never by the message", () => {
    const cases: Array<[number, unknown, string]> = [
      [400, body(130429), "transient"], // throughput reached
      [400, body(131056), "transient"], // pair rate limit
      [400, body(131048), "transient"], // spam rate limit
      [400, body(80007), "transient"],
      [500, body(131000), "transient"], // something went wrong: Meta sent nothing
      [503, body(133004), "transient"],
      [400, body(9999, { is_transient: true }), "transient"],
      [400, body(131047), "permanent"], // outside the 24-hour window
      [401, body(190), "permanent"], // token expired
      [400, body(100), "permanent"], // invalid parameter
      [400, body(131026), "permanent"], // undeliverable
      [400, { error: { message: "(#130429) looks like a rate limit", code: 100 } }, "permanent"],
      [429, "<html>", "transient"],
      [502, "<html>", "outcome-unknown"], // a gateway: Meta may have taken it
      [504, undefined, "outcome-unknown"],
      [403, "<html>", "permanent"],
    ];
    for (const [status, answer, expected] of cases) {
      const error = graphError(status, answer, new Headers());
      expect(error.errorClass, `${status} ${JSON.stringify(answer)}`).toBe(expected);
      expect(classifyError(error).class).toBe(expected);
    }
  });

  it("become the outbox's send results, with Retry-After when Meta gives one", () => {
    expect(sendResultOf(graphError(429, body(4), new Headers({ "retry-after": "7" })))).toEqual({
      ok: false,
      retryable: true,
      retryAfterMs: 7000,
      error: expect.stringContaining("code 4"),
    });
    expect(sendResultOf(graphError(400, body(131047), new Headers()))).toMatchObject({
      ok: false,
      retryable: false,
    });
    expect(sendResultOf(graphError(502, "", new Headers()))).toMatchObject({
      ok: false,
      outcomeUnknown: true,
    });
  });

  it("a lost send is untraceable and not repeatable (no idempotency key, no lookup)", async () => {
    const route = { channel: "whatsappcloud", accountId: "biz", to: "15550001" };
    const result = await reconcileWhatsAppCloud({
      id: "c1",
      route,
      text: "x",
      chunkIndex: 0,
      chunkCount: 1,
    });
    expect(result).toMatchObject({ outcome: "untraceable", idempotent: false });
  });
});

describe("WhatsApp formatting", () => {
  it("turns Markdown into WhatsApp's markers and leaves code alone", () => {
    expect(markdownToWhatsApp("**bold** and *it* and __b2__ and _i2_ and ~~gone~~")).toBe(
      "*bold* and _it_ and *b2* and _i2_ and ~gone~",
    );
    expect(markdownToWhatsApp("# Title\n[docs](https://x.test/a) `**raw**`")).toBe(
      "*Title*\ndocs (https://x.test/a) `**raw**`",
    );
    expect(markdownToWhatsApp("```\n**kept**\n```")).toBe("```\n**kept**\n```");
  });
});

describe("Meta's signatures", () => {
  it("X-Hub-Signature-256 is sha256=<hex HMAC of the raw bytes>; any other secret or byte fails", async () => {
    const raw = new TextEncoder().encode('{"object":"whatsapp_business_account","entry":[]}');
    const signature = await signHubBody("app-secret", raw);
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await signedWith(raw, signature, "app-secret")).toBe(true);
    expect(
      await signedWith(
        raw,
        signature.replace(/[a-f]/g, (c) => c.toUpperCase()).replace("SHA", "sha"),
        "app-secret",
      ),
    ).toBe(true);
    expect(await signedWith(raw, signature, "other")).toBe(false);
    expect(await signedWith(raw, signature, undefined)).toBe(false);
    expect(await signedWith(raw, null, "app-secret")).toBe(false);
    expect(await signedWith(raw, signature.slice(0, -2), "app-secret")).toBe(false);
    const tampered = raw.slice();
    tampered[3] = tampered[3]! ^ 1;
    expect(await signedWith(tampered, signature, "app-secret")).toBe(false);
  });
});
