import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../durable-objects/helpers.ts";

const BASE = "https://edgeclaw.test/admin";
const auth = { authorization: "Bearer test-gateway-token" };

describe("admin API on live sessions", () => {
  it("lists a session once its run mirrored to Postgres, shows its transcript, resets it, and reports dead letters", async () => {
    const key = "agent:main:admin-live";
    await scriptModel("admin-live", [{ type: "text", text: "mirrored answer" }]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "hello admin [scenario:admin-live]")),
    );

    const shown = await waitFor(
      async () => {
        const res = await SELF.fetch(`${BASE}/sessions/${encodeURIComponent(key)}`, {
          headers: auth,
        });
        if (res.status !== 200) return undefined;
        const body = (await res.json()) as Record<string, unknown>;
        return JSON.stringify(body).includes("mirrored answer") ? body : undefined;
      },
      10_000,
      "the mirrored transcript",
    );
    const before = (shown as { session?: { sessionId?: string } }).session?.sessionId;
    expect(before).toBeTruthy();

    const reset = await SELF.fetch(`${BASE}/sessions/${encodeURIComponent(key)}/reset`, {
      method: "POST",
      headers: auth,
    });
    expect(reset.status).toBe(200);
    const { result } = (await reset.json()) as { result: { sessionId: string } };
    expect(result.sessionId).not.toBe(before);
    expect(await sessionStub(key).history()).toEqual([]);

    const dead = await SELF.fetch(`${BASE}/sessions/${encodeURIComponent(key)}/dead-letters`, {
      headers: auth,
    });
    expect(await dead.json()).toEqual({ sessionKey: key, deadLetters: [] });
    const unknown = await SELF.fetch(`${BASE}/sessions/nope/dead-letters`, { headers: auth });
    expect(unknown.status).toBe(404);
  });
});
