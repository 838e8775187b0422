import { describe, expect, it } from "vitest";
import {
  eventId,
  lineEvent,
  lineId,
  postLine,
  TEST_LINE,
  textMessage,
  webhookBody,
} from "./helpers.ts";

/**
 * The LINE webhook through the generic handler: status codes, and that a refused request stores
 * nothing (checked by sending the genuine request afterwards: had anything been stored, it would now
 * be a duplicate).
 */

function dm(user = lineId("U"), id = eventId(), message = textMessage("hello")) {
  return webhookBody([
    lineEvent({
      source: { type: "user", userId: user },
      webhookEventId: id,
      message,
    }),
  ]);
}

describe("LINE webhook", () => {
  it("answers the console's Verify (signed, no events) with 200 and stores nothing", async () => {
    const res = await postLine(webhookBody([]));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-openclaw-delivery-accepted")).toBeNull();
  });

  it("accepts a signed event durably and reports LINE's redeliveries (same webhookEventId) as duplicates", async () => {
    const user = lineId("U");
    const id = eventId();
    const message = textMessage("hello");
    const first = await postLine(dm(user, id, message));
    expect(first.status).toBe(200);
    expect(first.headers.get("x-openclaw-delivery-accepted")).toBe("durable");
    expect(first.headers.get("x-edgeclaw-ingest")).toBe("accepted");
    const redelivered = webhookBody([
      lineEvent({
        source: { type: "user", userId: user },
        webhookEventId: id,
        isRedelivery: true,
        // A redelivery carries the same message (its id is the dedup key).
        message,
      }),
    ]);
    const again = await postLine(redelivered);
    expect(again.status).toBe(200);
    expect(again.headers.get("x-edgeclaw-ingest")).toBe("duplicate");
  });

  it("stores every event of a request with several, each once", async () => {
    const group = lineId("C");
    const users = [lineId("U"), lineId("U"), lineId("U")];
    const events = [
      lineEvent({ source: { type: "user", userId: users[0]! }, message: textMessage("one") }),
      lineEvent({
        source: { type: "group", groupId: group, userId: users[1]! },
        message: textMessage("two"),
      }),
      lineEvent({
        type: "follow",
        source: { type: "user", userId: users[2]! },
        replyToken: "t",
        extra: { follow: { isUnblocked: false } },
      }),
      lineEvent({ type: "beacon", source: { type: "user", userId: users[2]! } }),
    ];
    const res = await postLine(webhookBody(events));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted,accepted,accepted");
    expect(res.headers.get("x-edgeclaw-dropped")).toContain("unsupported event type beacon");
    const again = await postLine(webhookBody(events));
    expect(again.headers.get("x-edgeclaw-ingest")).toBe("duplicate,duplicate,duplicate");
  });

  it("rejects a bad, missing or other account's signature with 401 and stores nothing", async () => {
    const body = dm();
    expect((await postLine(body, { secret: "not-the-secret" })).status).toBe(401);
    expect((await postLine(body, { signature: null })).status).toBe(401);
    expect((await postLine(body, { signature: "" })).status).toBe(401);
    // The biz account's secret does not open the default account's path, nor the reverse.
    expect((await postLine(body, { secret: TEST_LINE.bizChannelSecret })).status).toBe(401);
    expect((await postLine(body, { path: "/line/biz" })).status).toBe(401);
    const genuine = await postLine(body);
    expect(genuine.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  });

  it("serves each account on its own path with its own secret", async () => {
    const res = await postLine(dm(), { path: "/line/biz", secret: TEST_LINE.bizChannelSecret });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  });

  it("refuses a body over 64 KB with 413 before reading it, and malformed bodies with 400", async () => {
    const user = lineId("U");
    const big = webhookBody([
      lineEvent({
        source: { type: "user", userId: user },
        message: textMessage("x".repeat(70 * 1024)),
      }),
    ]);
    expect((await postLine(big)).status).toBe(413);
    expect((await postLine("not json")).status).toBe(400);
    expect((await postLine(JSON.stringify({ events: [] }))).status).toBe(400);
    expect(
      (await postLine(JSON.stringify({ destination: TEST_LINE.botUserId, events: "none" }))).status,
    ).toBe(400);
  });

  it("takes only POST on the webhook path", async () => {
    const { SELF } = await import("cloudflare:test");
    const res = await SELF.fetch("https://edgeclaw.test/line/webhook", {
      method: "PUT",
      body: dm(),
    });
    expect(res.status).not.toBe(200);
  });
});
