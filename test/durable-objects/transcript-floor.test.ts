import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  webchatEvent,
} from "./helpers.ts";

/**
 * The current session's transcript is read above the floor written when it started (schema step 17
 * dropped the (session_id, seq) index): after /new and an eviction the model still sees every turn
 * of the new session and none of the one before.
 */
describe("the current session's transcript floor", () => {
  it("keeps the new session's own turns, and only those, across /new and an eviction", async () => {
    const key = `agent:main:transcript-floor-${crypto.randomUUID()}`;
    const scenario = `floor-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(scenario, [
      { type: "text", text: "noted the banana" },
      { type: "text", text: "noted the cherry" },
      { type: "text", text: "cherry it is" },
    ]);
    const say = async (text: string) =>
      collectRunEvents(await sessionStub(key).chat(webchatEvent(key, text)));
    await say(`remember banana [scenario:${scenario}]`);
    await say("/new");
    await say(`remember cherry [scenario:${scenario}]`);
    const floor = await runInDurableObject(sessionStub(key), (_instance, state) =>
      Number(new SessionStore(state.storage.sql).meta.get("transcriptSessionFloor")),
    );
    // The first session's two rows are below it.
    expect(floor).toBeGreaterThanOrEqual(2);
    await abortAllDurableObjects();

    await say(`which fruit? [scenario:${scenario}]`);
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(3);
    const seen = JSON.stringify(requests[2]!.body.messages);
    expect(seen).toContain("remember cherry");
    expect(seen).toContain("noted the cherry");
    expect(seen).toContain("which fruit?");
    expect(seen).not.toContain("noted the banana");
  });
});
