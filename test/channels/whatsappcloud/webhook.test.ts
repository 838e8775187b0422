import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  BIZ_NUMBER,
  DEFAULT_NUMBER,
  TEST_WHATSAPP_CLOUD,
  graphCalls,
  graphMessages,
  postWhatsApp,
  settle,
  textMessage,
  waId,
  webhookBody,
} from "./helpers.ts";

/**
 * The inbound edge of the Cloud API channel: Meta's GET subscription handshake, the signature on
 * every POST, and what a signed body that is not a user message turns into (nothing stored, no
 * run). The contract suite (test/channels/contract) covers forged / oversized / malformed /
 * duplicate / stranger on top of this.
 */

const T = TEST_WHATSAPP_CLOUD;

function handshake(path: string, query: Record<string, string>): Promise<Response> {
  return SELF.fetch(`https://edgeclaw.test${path}?${new URLSearchParams(query)}`);
}

describe("WhatsApp Cloud API webhook", () => {
  it("answers Meta's handshake with the challenge alone when the verify token is the path's account's", async () => {
    for (const [path, token] of [
      [T.path, T.verifyToken],
      [T.bizPath, T.bizVerifyToken],
    ] as const) {
      const response = await handshake(path, {
        "hub.mode": "subscribe",
        "hub.verify_token": token,
        "hub.challenge": "1158201444",
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/plain");
      expect(await response.text()).toBe("1158201444");
    }
  });

  it("refuses a handshake with a wrong or missing token, or another mode, with 403 and no challenge", async () => {
    const cases: Array<Record<string, string>> = [
      { "hub.mode": "subscribe", "hub.verify_token": "guess", "hub.challenge": "42" },
      { "hub.mode": "subscribe", "hub.verify_token": `${T.verifyToken}x`, "hub.challenge": "42" },
      // The other account's token does not open this path.
      { "hub.mode": "subscribe", "hub.verify_token": T.bizVerifyToken, "hub.challenge": "42" },
      { "hub.mode": "subscribe", "hub.challenge": "42" },
      { "hub.mode": "unsubscribe", "hub.verify_token": T.verifyToken, "hub.challenge": "42" },
    ];
    for (const query of cases) {
      const response = await handshake(T.path, query);
      expect(response.status, JSON.stringify(query)).toBe(403);
      expect(await response.text()).not.toContain("42");
    }
  });

  it("refuses a POST without a signature, or with a malformed one, with 401", async () => {
    const body = webhookBody(BIZ_NUMBER, { messages: [textMessage(waId(), "hi")] });
    expect((await postWhatsApp(body, BIZ_NUMBER, null)).status).toBe(401);
    expect((await postWhatsApp(body, BIZ_NUMBER, "sha1=abc")).status).toBe(401);
    expect((await postWhatsApp(body, BIZ_NUMBER, `sha256=${"0".repeat(64)}`)).status).toBe(401);
  });

  it("takes delivery and read receipts (statuses) with 200 and runs nothing", async () => {
    const user = waId();
    const statuses = ["sent", "delivered", "read"].map((status) => ({
      id: `wamid.status${status}${user}`,
      status,
      timestamp: String(Math.floor(Date.now() / 1000)),
      recipient_id: user,
    }));
    statuses.push({
      id: `wamid.statusfailed${user}`,
      status: "failed",
      timestamp: String(Math.floor(Date.now() / 1000)),
      recipient_id: user,
      errors: [{ code: 131047, title: "Re-engagement message" }],
    } as (typeof statuses)[number]);
    const sendsBefore = (await graphCalls("send")).length;
    const response = await postWhatsApp(webhookBody(BIZ_NUMBER, { statuses }));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
    await settle(1000);
    expect(await graphMessages(user)).toEqual([]);
    expect((await graphCalls("send")).length).toBe(sendsBefore);
  });

  it("takes a change only for the path's own number: another number of the app, or the other account's, is dropped", async () => {
    const user = waId();
    // Signed by biz's app on biz's path, but naming the default account's number.
    const body = webhookBody(DEFAULT_NUMBER, { messages: [textMessage(user, "hi")] });
    const response = await postWhatsApp(body, BIZ_NUMBER);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
    // The default account's app secret does not sign for biz's path.
    expect((await postWhatsApp(body, { ...BIZ_NUMBER, secret: T.appSecret })).status).toBe(401);
    const unknown = { ...BIZ_NUMBER, phoneNumberId: "999999999999999" };
    const other = await postWhatsApp(webhookBody(unknown, { messages: [textMessage(user, "hi")] }));
    expect(other.status).toBe(200);
    expect(other.headers.get("x-edgeclaw-ingest")).toBeNull();
    await settle(1000);
    expect(await graphMessages(user)).toEqual([]);
  });
});
