import { describe, expect, it } from "vitest";
import { eventId, lineEvent, lineId, postLine, textMessage, webhookBody } from "./helpers.ts";

/**
 * A captured LINE request stays validly signed forever; the SessionDO's dedup record of its
 * webhookEventId is kept 48 h. So an event whose signed `timestamp` is older than
 * `channels.line.eventMaxAgeSeconds` (24 h by default) is refused: a replay two days later — once
 * the record is gone, which a fresh webhookEventId stands for here — stores nothing.
 */

const HOUR = 60 * 60 * 1000;

function signedAt(timestamp: number, user = lineId("U"), type = "message") {
  return webhookBody([
    lineEvent({
      type,
      source: { type: "user", userId: user },
      webhookEventId: eventId(),
      timestamp,
      ...(type === "message" ? { message: textMessage("replayed hello") } : {}),
    }),
  ]);
}

describe("LINE replay window", () => {
  it.each([
    ["49 h old (its dedup record is gone)", 49 * HOUR],
    ["25 h old (past the 24 h default)", 25 * HOUR],
    ["days old", 5 * 24 * HOUR],
  ])("refuses a validly signed event %s: 200, nothing stored", async (_label, age) => {
    const response = await postLine(signedAt(Date.now() - age));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-openclaw-delivery-accepted")).toBeNull();
    expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
    expect(response.headers.get("x-edgeclaw-dropped")).toMatch(
      /channels\.line\.eventMaxAgeSeconds/,
    );
  });

  it("refuses stale system events (follow, postback) the same way", async () => {
    for (const type of ["follow", "postback"]) {
      const body = JSON.parse(signedAt(Date.now() - 30 * HOUR, lineId("U"), type));
      if (type === "postback") body.events[0].postback = { data: "action=buy" };
      const response = await postLine(JSON.stringify(body));
      expect(response.headers.get("x-edgeclaw-ingest")).toBeNull();
      expect(response.headers.get("x-edgeclaw-dropped")).toMatch(/eventMaxAgeSeconds/);
    }
  });

  it("accepts an event redelivered within the window (23 h old)", async () => {
    const response = await postLine(signedAt(Date.now() - 23 * HOUR));
    expect(response.status).toBe(200);
    expect(response.headers.get("x-edgeclaw-ingest")).toBe("accepted");
  });
});
