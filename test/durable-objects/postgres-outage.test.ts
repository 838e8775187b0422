import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { SessionRpc } from "../../durable-objects/session-api.ts";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { sessionStub, waitFor } from "./helpers.ts";

/** Points one live SessionDO at an address where nothing listens (locally the driver goes through the bridge), as during an outage. */
function setDatabaseProxy(instance: SessionRpc, proxy: string | undefined): void {
  (instance as unknown as { env: typeof env }).env = { ...env, EDGECLAW_PG_WS_PROXY: proxy };
}

describe("Postgres outage", () => {
  it("keeps an accepted event through an outage and processes it once Postgres is back", async () => {
    const key = "agent:main:testchan:direct:outage-user";
    const stub = sessionStub(key);
    await runInDurableObject(stub, (instance) => setDatabaseProxy(instance, "127.0.0.1:9"));
    const envelope = inboundEnvelopeSchema.parse({
      dedupKey: "testchan:outage-1",
      channel: "testchan",
      chatType: "direct",
      peerId: "outage-user",
      senderId: "u1",
      text: "are you there?",
      receivedAt: Date.now(),
      route: { channel: "testchan", to: "outage-user" },
    });
    expect(await stub.accept({ envelope, agentId: "main", sessionKey: key })).toEqual({
      status: "accepted",
    });
    await runDurableObjectAlarm(stub);

    // The alarm may already have been running when we asked: wait until the failure is recorded.
    const during = await waitFor(
      () =>
        runInDurableObject(stub, (_i, state) => {
          const store = new SessionStore(state.storage.sql);
          const retryAt = store.meta.get("retryAt");
          return retryAt ? { states: store.inbox.byState("new").length, retryAt } : undefined;
        }),
      10_000,
      "the triage failure",
    );
    expect(during.states).toBe(1);
    expect(Number(during.retryAt)).toBeGreaterThan(Date.now());

    await runInDurableObject(stub, (instance, state) => {
      setDatabaseProxy(instance, env.EDGECLAW_PG_WS_PROXY);
      new SessionStore(state.storage.sql).meta.set("retryAt", String(Date.now() - 1));
    });
    await runDurableObjectAlarm(stub);
    const after = await runInDurableObject(stub, (_i, state) => {
      const store = new SessionStore(state.storage.sql);
      const row = store.inbox.byKey("testchan:outage-1");
      return {
        fresh: store.inbox.byState("new").length,
        state: row?.state,
        reply: row?.reply ?? "",
        retryAt: store.meta.get("retryAt"),
      };
    });
    // An unknown DM sender under the default dmPolicy "pairing": decided (a pairing code), not lost.
    expect(after).toMatchObject({ fresh: 0, state: "settled", retryAt: undefined });
    expect(after.reply).toMatch(/[A-HJ-NP-Z2-9]{8}/);
  });
});
