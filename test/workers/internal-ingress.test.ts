import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../functions/channels/companion/signature.ts";
import type { InboundEnvelopeInput } from "../../functions/channels/envelope.ts";

const KEY = { id: "k1", secret: "test-companion-secret" };
const URL_BASE = "https://edgeclaw.test/internal/ingress";

function envelope(peer: string, dedup = crypto.randomUUID()): InboundEnvelopeInput {
  return {
    dedupKey: `testchan:${dedup}`,
    channel: "testchan",
    chatType: "group",
    peerId: peer,
    senderId: "u1",
    text: "hello",
    receivedAt: Date.now(),
    route: { channel: "testchan", to: peer },
  };
}

async function post(body: string, headers: Record<string, string>): Promise<Response> {
  return SELF.fetch(URL_BASE, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
}

async function signed(body: string, options: { timestamp?: number; key?: typeof KEY; path?: string } = {}): Promise<Record<string, string>> {
  return signRequest(options.key ?? KEY, {
    method: "POST",
    path: options.path ?? "/internal/ingress",
    body: new TextEncoder().encode(body),
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
  });
}

describe("internal ingress", () => {
  it("accepts a signed envelope once and reports the duplicate", async () => {
    const body = JSON.stringify(envelope("room-accept"));
    const first = await post(body, await signed(body));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ status: "accepted", sessionKey: "agent:main:testchan:group:room-accept" });
    const again = await post(body, await signed(body));
    expect(await again.json()).toMatchObject({ status: "duplicate" });
  });

  it.each([
    ["a wrong secret", async (body: string) => signed(body, { key: { id: "k1", secret: "nope" } })],
    ["a stale timestamp", async (body: string) => signed(body, { timestamp: Math.floor(Date.now() / 1000) - 301 })],
    ["another path", async (body: string) => signed(body, { path: "/internal/other" })],
    ["an unknown key id", async (body: string) => signed(body, { key: { id: "k9", secret: "test-companion-secret" } })],
    ["no signature headers", async () => ({})],
  ])("refuses %s with 401 and stores nothing", async (_label, headersFor) => {
    const env = envelope(`room-${crypto.randomUUID()}`);
    const body = JSON.stringify(env);
    const res = await post(body, await headersFor(body));
    expect(res.status).toBe(401);
    // Nothing was stored: the same event, properly signed, is still new.
    const ok = await post(body, await signed(body));
    expect(await ok.json()).toMatchObject({ status: "accepted" });
  });

  it("refuses a body that was changed after signing", async () => {
    const body = JSON.stringify(envelope("room-tamper"));
    const headers = await signed(body);
    const res = await post(body.replace("hello", "HELLO"), headers);
    expect(res.status).toBe(401);
  });

  it("answers 400 for malformed JSON and invalid envelopes, 413 for oversized bodies", async () => {
    const malformed = "{not json";
    expect((await post(malformed, await signed(malformed))).status).toBe(400);
    const invalid = JSON.stringify({ dedupKey: "x" });
    const res = await post(invalid, await signed(invalid));
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("channel");
    const huge = JSON.stringify({ ...envelope("room-huge"), text: "x".repeat(1024 * 1024) });
    expect((await post(huge, await signed(huge))).status).toBe(413);
  });
});
