import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "./helpers.ts";
import type { RunEvent } from "../../durable-objects/session-api.ts";

function outcome(events: RunEvent[]) {
  const end = events.find((event) => event.type === "done" || event.type === "error");
  return end?.type === "done"
    ? { done: end.text }
    : end?.type === "error"
      ? { error: end.code }
      : {};
}

async function setQueue(key: string, args: string) {
  const events = await collectRunEvents(
    await sessionStub(key).chat(webchatEvent(key, `/queue ${args}`)),
  );
  expect(outcome(events)).toHaveProperty("done");
}

describe("queue modes while a run is active", () => {
  it("interrupt: the newer message aborts the run and is answered instead", async () => {
    const key = `agent:main:queue-interrupt-${crypto.randomUUID()}`;
    await setQueue(key, "interrupt");
    await scriptModel("q-int", [
      { type: "text", text: "slow answer", delayMs: 5_000 },
      { type: "text", text: "answer to the second" },
    ]);
    const first = sessionStub(key).chat(webchatEvent(key, "first [scenario:q-int]"));
    await waitFor(
      async () => (await modelRequests("q-int")).length >= 1,
      10_000,
      "the first model call",
    );
    const second = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "second [scenario:q-int]")),
    );
    expect(outcome(second)).toEqual({ done: "answer to the second" });
    expect(outcome(await collectRunEvents(await first))).toEqual({ error: "aborted" });
    const history = await sessionStub(key).history();
    expect(
      history.filter((entry) => entry.role === "assistant").map((entry) => entry.text),
    ).toEqual(["answer to the second"]);
  });

  it("followup: each queued message gets its own turn after the run", async () => {
    const key = `agent:main:queue-followup-${crypto.randomUUID()}`;
    await setQueue(key, "followup debounce:50ms");
    await scriptModel("q-fu", [
      { type: "text", text: "one", delayMs: 800 },
      { type: "text", text: "two" },
      { type: "text", text: "three" },
    ]);
    const first = sessionStub(key).chat(webchatEvent(key, "m1 [scenario:q-fu]"));
    await waitFor(
      async () => (await modelRequests("q-fu")).length >= 1,
      10_000,
      "the first model call",
    );
    // chat() resolves once the event is stored, so awaiting it fixes the arrival order.
    const second = await sessionStub(key).chat(webchatEvent(key, "m2 [scenario:q-fu]"));
    const third = await sessionStub(key).chat(webchatEvent(key, "m3 [scenario:q-fu]"));
    const results = await Promise.all(
      [first, second, third].map(async (stream) => outcome(await collectRunEvents(await stream))),
    );
    expect(results).toEqual([{ done: "one" }, { done: "two" }, { done: "three" }]);
    expect(await modelRequests("q-fu")).toHaveLength(3);
  });

  it("collect: messages queued behind a run are answered together in one turn", async () => {
    const key = `agent:main:queue-collect-${crypto.randomUUID()}`;
    await setQueue(key, "collect debounce:50ms");
    await scriptModel("q-col", [
      { type: "text", text: "first done", delayMs: 800 },
      { type: "text", text: "both answered" },
    ]);
    const first = sessionStub(key).chat(webchatEvent(key, "m1 [scenario:q-col]"));
    await waitFor(
      async () => (await modelRequests("q-col")).length >= 1,
      10_000,
      "the first model call",
    );
    const second = await sessionStub(key).chat(webchatEvent(key, "m2 [scenario:q-col]"));
    const third = await sessionStub(key).chat(webchatEvent(key, "m3 [scenario:q-col]"));
    const results = await Promise.all(
      [first, second, third].map(async (stream) => outcome(await collectRunEvents(await stream))),
    );
    expect(results).toEqual([
      { done: "first done" },
      { done: "both answered" },
      { done: "both answered" },
    ]);
    const requests = await modelRequests("q-col");
    expect(requests).toHaveLength(2);
    const seen = JSON.stringify(requests[1]!.body);
    expect(seen).toContain("m2");
    expect(seen).toContain("m3");
  });

  it("cap with drop:new refuses messages beyond the cap while a run is busy", async () => {
    const key = `agent:main:queue-cap-${crypto.randomUUID()}`;
    await setQueue(key, "followup cap:1 drop:new debounce:50ms");
    await scriptModel("q-cap", [
      { type: "text", text: "busy", delayMs: 800 },
      { type: "text", text: "queued one" },
    ]);
    const first = sessionStub(key).chat(webchatEvent(key, "m1 [scenario:q-cap]"));
    await waitFor(
      async () => (await modelRequests("q-cap")).length >= 1,
      10_000,
      "the first model call",
    );
    const second = await sessionStub(key).chat(webchatEvent(key, "m2 [scenario:q-cap]"));
    const third = await sessionStub(key).chat(webchatEvent(key, "m3 [scenario:q-cap]"));
    const results = await Promise.all(
      [first, second, third].map(async (stream) => outcome(await collectRunEvents(await stream))),
    );
    expect(results).toEqual([{ done: "busy" }, { done: "queued one" }, { error: "queue_full" }]);
  });
});
