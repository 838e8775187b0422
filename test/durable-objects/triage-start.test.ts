import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import {
  newScenario,
  scriptModel,
  scriptSlack,
  slackCalls,
  slackMessages,
  uniqueId,
} from "../channels/slack/helpers.ts";
import { configWith, sessionWithConfig } from "./budget-helpers.ts";
import { modelRequests, sessionStub, waitFor } from "./helpers.ts";
import { plainSlackDm } from "./slack-dm.ts";
import { settle } from "../channels/wait.ts";

/**
 * A message whose run can start at once is written once, with its run's start (run/start.ts
 * startTriagedRun): triage holds its decision in memory until the pass ends, the row stays `new`.
 * A crash in between must leave it to be triaged again and answered exactly once; a message that
 * arrives behind a run is still queued (queue modes, debounce).
 */

function rowsOf(sessionKey: string, dedupKey: string) {
  return runInDurableObject(sessionStub(sessionKey), (_instance, state) => {
    const store = new SessionStore(state.storage.sql);
    const row = store.inbox.byKey(dedupKey);
    const runs = state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM runs`).one().n;
    return { state: row?.state, runId: row?.runId ?? null, decision: row?.decision, runs };
  });
}

describe("a message's triage and its run's start in one write", () => {
  it("a crash between triage and the run's start: the message is triaged again and answered once", async () => {
    const key = `agent:main:triage-start-${uniqueId("s").toLowerCase()}`;
    const channel = uniqueId("D");
    const scenario = newScenario("triage-start-crash");
    await scriptModel(scenario, [{ type: "text", text: "Answered once." }]);
    // The ack reaction is the last step of triage: a Slack that holds it open holds the pass there,
    // after the decision, before the run starts.
    const config = configWith({ messages: { ackReactionScope: "all" } });
    await sessionWithConfig(key, config);
    await scriptSlack({ method: "reactions.add", channel, times: 1, delayMs: 30_000 });
    const event = plainSlackDm(key, channel, `hello [scenario:${scenario}]`, "UTRIAGE");
    expect((await sessionStub(key).accept(event)).status).toBe("accepted");
    await waitFor(
      async () => (await slackCalls("reactions.add", channel)).length >= 1,
      15_000,
      "the ack reaction",
    );
    // Triage has decided (the reaction comes after its decision) and holds it: nothing written yet.
    expect(await rowsOf(key, event.envelope.dedupKey)).toMatchObject({ state: "new", runs: 0 });

    await abortAllDurableObjects();
    await sessionWithConfig(key, config);
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () => (await slackMessages(channel)).length >= 1,
      20_000,
      "the answer in Slack",
    );
    // Whatever passes follow, one run, one model call, one reply.
    await settle(1_000);
    await runDurableObjectAlarm(sessionStub(key));
    expect((await slackMessages(channel)).map((m) => m.text)).toEqual(["Answered once."]);
    expect(await modelRequests(scenario)).toHaveLength(1);
    const after = await rowsOf(key, event.envelope.dedupKey);
    expect(after).toMatchObject({ state: "settled", runs: 1, decision: { outcome: "accepted" } });
    expect(after.runId).not.toBeNull();
  });

  it("writes the message once, taken by its run, when the run starts at once", async () => {
    const key = `agent:main:triage-start-${uniqueId("s").toLowerCase()}`;
    const channel = uniqueId("D");
    const scenario = newScenario("triage-start-once");
    await scriptModel(scenario, [{ type: "hang" }]);
    await sessionWithConfig(key, configWith({}));
    const event = plainSlackDm(key, channel, `hello [scenario:${scenario}]`, "UTRIAGE");
    await sessionStub(key).accept(event);
    await waitFor(async () => (await modelRequests(scenario)).length >= 1, 15_000, "the run");
    // The run holds the message with triage's decision and what the run reads of it.
    const taken = await runInDurableObject(sessionStub(key), (_instance, state) => {
      const row = new SessionStore(state.storage.sql).inbox.byKey(event.envelope.dedupKey);
      return row && { state: row.state, decision: row.decision, text: row.prepared?.text };
    });
    expect(taken).toMatchObject({
      state: "taken",
      decision: { outcome: "accepted" },
      text: `hello [scenario:${scenario}]`,
    });
    await abortAllDurableObjects();
  });
});
