import { describe, expect, it } from "vitest";
import { encryptFeishu } from "../../../functions/channels/feishu/crypto.ts";
import {
  PLAIN,
  TEST_FEISHU,
  feishuId,
  feishuRequest,
  messageEvent,
  plainMessage,
  postFeishu,
  postRaw,
} from "./helpers.ts";

/**
 * The Feishu webhook through the generic handler: handshakes, status codes, and that a refused
 * request stores nothing (checked by sending the genuine request afterwards: had anything been
 * stored, it would now be a duplicate).
 */

const dm = (eventId = feishuId("om")) =>
  messageEvent({ sender: feishuId("ou"), eventId, content: { text: "hello" } });

async function acceptedAfter(refused: Response, eventId: string, genuine: () => Promise<Response>) {
  expect(refused.status, `refused request for ${eventId}`).not.toBe(200);
  const res = await genuine();
  expect(res.status).toBe(200);
  expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
}

describe("Feishu webhook", () => {
  it("answers the encrypted url_verification challenge, signed or not, only with the app's token", async () => {
    const challenge = {
      challenge: "ch-123",
      token: TEST_FEISHU.verificationToken,
      type: "url_verification",
    };
    for (const signKey of [undefined, null]) {
      const res = await postFeishu(challenge, { signKey });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ challenge: "ch-123" });
      expect(res.headers.get("x-openclaw-delivery-accepted")).toBeNull();
    }
    expect((await postFeishu({ ...challenge, token: "wrong" }, { signKey: null })).status).toBe(
      401,
    );
    expect((await postFeishu({ ...challenge, token: "wrong" })).status).toBe(401);
  });

  it("answers the plain challenge of an app without an Encrypt Key, with its token only", async () => {
    const challenge = {
      challenge: "ch-plain",
      token: TEST_FEISHU.plainVerificationToken,
      type: "url_verification",
    };
    const res = await postFeishu(challenge, PLAIN);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: "ch-plain" });
    expect(
      (await postFeishu({ ...challenge, token: TEST_FEISHU.verificationToken }, PLAIN)).status,
    ).toBe(401);
  });

  it("accepts a signed encrypted event durably; Feishu's retries (same event_id) are duplicates", async () => {
    const body = dm();
    const first = await postFeishu(body);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-openclaw-delivery-accepted")).toBe("durable");
    expect(first.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    const again = await postFeishu(body);
    expect(again.headers.get("x-edgeclaw-ingest")).toBe("duplicate");
  });

  it("refuses forged, stale, unsigned, half-signed and wrongly encrypted requests, storing nothing", async () => {
    const cases: Array<[string, (body: Record<string, unknown>) => Promise<Response>]> = [
      ["bad signature", (b) => postFeishu(b, { signature: "0".repeat(64) })],
      ["signed with another key", (b) => postFeishu(b, { signKey: "not-the-key" })],
      [
        "stale timestamp",
        (b) => postFeishu(b, { timestamp: String(Math.floor(Date.now() / 1000) - 600) }),
      ],
      [
        "future timestamp",
        (b) => postFeishu(b, { timestamp: String(Math.floor(Date.now() / 1000) + 600) }),
      ],
      ["no signature headers on an event", (b) => postFeishu(b, { signKey: null })],
      [
        "signature without nonce",
        async (b) => {
          const { raw, headers } = await feishuRequest(b);
          delete headers["x-lark-request-nonce"];
          return postRaw(raw, headers);
        },
      ],
      [
        "encrypted with another key",
        (b) => postFeishu(b, { encryptKey: "another-key", signKey: TEST_FEISHU.encryptKey }),
      ],
      [
        "plain JSON to an encrypted app",
        (b) => postFeishu(b, { encryptKey: null, signKey: TEST_FEISHU.encryptKey }),
      ],
      [
        "wrong verification token inside",
        (b) => postFeishu({ ...b, header: { ...(b.header as object), token: "forged" } }),
      ],
    ];
    for (const [name, send] of cases) {
      const eventId = feishuId("om");
      const body = dm(eventId);
      const refused = await send(body);
      expect(refused.status, name).toBe(401);
      await acceptedAfter(refused, eventId, () => postFeishu(body));
    }
  });

  it("refuses a token-only app's request with a wrong or missing token, or an encrypted body", async () => {
    const sender = feishuId("ou");
    for (const token of ["forged", ""]) {
      const body = plainMessage({ sender, content: { text: "hi" } });
      (body.header as Record<string, unknown>).token = token;
      expect((await postFeishu(body, PLAIN)).status).toBe(401);
    }
    const body = plainMessage({ sender, content: { text: "hi" } });
    expect(
      (
        await postFeishu(body, {
          path: PLAIN.path,
          encryptKey: TEST_FEISHU.plainVerificationToken,
          signKey: null,
        })
      ).status,
    ).toBe(401);
    const ok = await postFeishu(body, PLAIN);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  });

  it("answers 413 to an oversized body, 401 to non-JSON, 400 to a verified body that is no event", async () => {
    expect(
      (await postRaw("x".repeat(300 * 1024), { "content-type": "application/json" })).status,
    ).toBe(413);
    expect((await postRaw("not json", { "content-type": "application/json" })).status).toBe(401);
    const bad = await postFeishu({
      schema: "2.0",
      header: { event_type: "im.message.receive_v1", token: TEST_FEISHU.verificationToken },
      event: {},
    });
    expect(bad.status).toBe(400);
    const encrypted = await encryptFeishu(TEST_FEISHU.encryptKey, "[1,2,3]");
    const { headers } = await feishuRequest({}, {});
    expect((await postRaw(JSON.stringify({ encrypt: encrypted }), headers)).status).toBe(401);
  });

  it("does not serve an account left in websocket mode (the companion's)", async () => {
    const res = await postFeishu(
      { challenge: "c", token: "ws-token", type: "url_verification" },
      { path: "/feishu/ws", encryptKey: null },
    );
    expect(res.status).toBe(404);
  });
});
