import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionToolsHost } from "../../../durable-objects/session/subagents/host.ts";
import type { SessionState } from "../../../durable-objects/session/state.ts";
import { childrenOf, inboxRows, spawnAndYield } from "./helpers.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "../helpers.ts";
import { newScenario } from "../../agent/model-helpers.ts";

/** The parent's sessions_send as a resumed run would make it: same run, same tool call. */
function sendFrom(key: string, target: string, text: string, callId: string, timeout: number) {
  return runInDurableObject(sessionStub(key), async (instance) =>
    sessionToolsHost((instance as unknown as { s: SessionState }).s, {
      runId: "run-wait",
      route: { channel: "webchat", accountId: "default", to: "tester" },
      options: { senderIsOwner: true },
    }).send(target, text, callId, timeout),
  );
}

describe("sessions_send waiting for the reply (timeoutSeconds)", () => {
  it("returns the target's reply inline, the same reply to a resumed call, and times out on a silent target", async () => {
    const parent = newScenario("send-wait");
    const child = newScenario("send-wait-child");
    const key = `agent:main:test-${parent}`;
    await scriptModel(parent, [
      spawnAndYield(child, parent),
      { type: "text", text: "child reported" },
    ]);
    await scriptModel(child, [
      { type: "text", text: "task done" },
      { type: "text", text: "The answer is 42." },
      { type: "hang" },
    ]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, `go [scenario:${parent}]`)),
    );
    await waitFor(async () => (await modelRequests(child)).length >= 1, 20_000, "the child's task");
    const [record] = await childrenOf(key);
    const childKey = record!.childKey;

    const first = JSON.parse(
      await sendFrom(key, childKey, `what is it? [scenario:${child}]`, "call_ask", 20),
    );
    expect(first).toEqual({ status: "ok", reply: "The answer is 42.", sessionKey: childKey });
    // The caller evicted after the send: its resumed call stores nothing new and gets the same reply.
    await abortAllDurableObjects();
    const again = JSON.parse(
      await sendFrom(key, childKey, `what is it? [scenario:${child}]`, "call_ask", 20),
    );
    expect(again).toEqual(first);
    expect(await inboxRows(childKey, "session-send:")).toHaveLength(1);
    expect(await modelRequests(child)).toHaveLength(2);

    // A target whose turn does not end in time: the tool says so, and does not wait longer.
    const started = Date.now();
    const late = JSON.parse(
      await sendFrom(key, childKey, `and then? [scenario:${child}]`, "call_late", 1),
    );
    expect(late.status).toBe("timeout");
    expect(late.error).toContain("no reply within 1 s");
    expect(Date.now() - started).toBeLessThan(5_000);
    // Fire and forget is still there: 0 returns at once.
    expect(
      JSON.parse(await sendFrom(key, childKey, `noted [scenario:${child}]`, "call_fire", 0)),
    ).toEqual({ status: "sent", sessionKey: childKey });
    await sessionStub(childKey).stopSubagent("the test is over");
  });
});
