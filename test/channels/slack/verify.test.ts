import { describe, expect, it } from "vitest";
import {
  signSlackRequest,
  verifySlackSignature,
} from "../../../functions/channels/slack/verify.ts";

// The worked example on Slack's "Verifying requests from Slack" page.
const DOC_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const DOC_TIMESTAMP = "1531420618";
const DOC_BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const DOC_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
const DOC_NOW_MS = Number(DOC_TIMESTAMP) * 1000;

const bytes = (text: string) => new TextEncoder().encode(text);
const headers = (timestamp?: string, signature?: string) => {
  const h = new Headers();
  if (timestamp !== undefined) h.set("X-Slack-Request-Timestamp", timestamp);
  if (signature !== undefined) h.set("X-Slack-Signature", signature);
  return h;
};

describe("verifySlackSignature", () => {
  it("reproduces Slack's published example signature", async () => {
    expect(await signSlackRequest(DOC_SECRET, DOC_TIMESTAMP, DOC_BODY)).toBe(DOC_SIGNATURE);
  });

  it("accepts Slack's published example request", async () => {
    const result = await verifySlackSignature(
      bytes(DOC_BODY),
      headers(DOC_TIMESTAMP, DOC_SIGNATURE),
      DOC_SECRET,
      DOC_NOW_MS,
    );
    expect(result).toEqual({ ok: true });
  });

  it("rejects a body changed by one byte", async () => {
    const result = await verifySlackSignature(
      bytes(`${DOC_BODY}x`),
      headers(DOC_TIMESTAMP, DOC_SIGNATURE),
      DOC_SECRET,
      DOC_NOW_MS,
    );
    expect(result).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("rejects the wrong secret", async () => {
    const result = await verifySlackSignature(
      bytes(DOC_BODY),
      headers(DOC_TIMESTAMP, DOC_SIGNATURE),
      "another-secret",
      DOC_NOW_MS,
    );
    expect(result).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("rejects a signature of another length without throwing", async () => {
    const result = await verifySlackSignature(
      bytes(DOC_BODY),
      headers(DOC_TIMESTAMP, "v0=abc"),
      DOC_SECRET,
      DOC_NOW_MS,
    );
    expect(result).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("accepts up to 300 s of skew either way and rejects beyond", async () => {
    const at = (offsetS: number) =>
      verifySlackSignature(
        bytes(DOC_BODY),
        headers(DOC_TIMESTAMP, DOC_SIGNATURE),
        DOC_SECRET,
        DOC_NOW_MS + offsetS * 1000,
      );
    expect(await at(300)).toEqual({ ok: true });
    expect(await at(-300)).toEqual({ ok: true });
    expect(await at(301)).toEqual({ ok: false, reason: "stale-timestamp" });
    expect(await at(-301)).toEqual({ ok: false, reason: "stale-timestamp" });
  });

  it("rejects missing headers, a non-numeric timestamp and a missing secret", async () => {
    expect(
      await verifySlackSignature(
        bytes(DOC_BODY),
        headers(undefined, DOC_SIGNATURE),
        DOC_SECRET,
        DOC_NOW_MS,
      ),
    ).toEqual({
      ok: false,
      reason: "missing-headers",
    });
    expect(
      await verifySlackSignature(bytes(DOC_BODY), headers(DOC_TIMESTAMP), DOC_SECRET, DOC_NOW_MS),
    ).toEqual({
      ok: false,
      reason: "missing-headers",
    });
    expect(
      await verifySlackSignature(
        bytes(DOC_BODY),
        headers("1531420618.5", DOC_SIGNATURE),
        DOC_SECRET,
        DOC_NOW_MS,
      ),
    ).toEqual({
      ok: false,
      reason: "stale-timestamp",
    });
    expect(
      await verifySlackSignature(
        bytes(DOC_BODY),
        headers(DOC_TIMESTAMP, DOC_SIGNATURE),
        undefined,
        DOC_NOW_MS,
      ),
    ).toEqual({
      ok: false,
      reason: "no-secret",
    });
  });
});
