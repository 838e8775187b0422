import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "./helpers.ts";
import { readFile } from "../../functions/agent/workspace.ts";
import { env } from "cloudflare:test";

function doneText(events: Awaited<ReturnType<typeof collectRunEvents>>): string | undefined {
  const done = events.find((event) => event.type === "done");
  return done?.type === "done" ? done.text : undefined;
}

describe("SessionDO accept", () => {
  it("stores an event once per dedup key and once per alias", async () => {
    const stub = sessionStub("agent:main:test-accept");
    const first = webchatEvent("agent:main:test-accept", "hello [scenario:accept]", "same", {
      aliasKeys: ["alias-1"],
    });
    expect(await stub.accept(first)).toEqual({ status: "accepted" });
    expect(await stub.accept(first)).toEqual({ status: "duplicate" });
    const viaAlias = webchatEvent("agent:main:test-accept", "hello again", "other", {
      aliasKeys: ["alias-1"],
    });
    expect(await stub.accept(viaAlias)).toEqual({ status: "duplicate" });
  });
});

describe("SessionDO runs", () => {
  it("answers a message through the model and streams the reply", async () => {
    await scriptModel("run-basic", [
      { type: "text", text: "Hello from the model", chunks: ["Hello ", "from ", "the model"] },
    ]);
    const key = "agent:main:test-run-basic";
    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "hi [scenario:run-basic]")),
    );
    expect(
      events
        .filter((e) => e.type === "text-delta")
        .map((e) => (e.type === "text-delta" ? e.text : ""))
        .join(""),
    ).toBe("Hello from the model");
    expect(doneText(events)).toBe("Hello from the model");
    const history = await sessionStub(key).history();
    expect(history.map((entry) => [entry.role, entry.text])).toEqual([
      ["user", "hi [scenario:run-basic]"],
      ["assistant", "Hello from the model"],
    ]);
  });

  it("a duplicate delivery replays the recorded answer without a second model call", async () => {
    await scriptModel("run-dup", [{ type: "text", text: "only once" }]);
    const key = "agent:main:test-run-dup";
    const event = webchatEvent(key, "hi [scenario:run-dup]", "dup-1");
    const first = await collectRunEvents(await sessionStub(key).chat(event));
    const second = await collectRunEvents(await sessionStub(key).chat(event));
    const third = await collectRunEvents(await sessionStub(key).chat(event));
    expect(doneText(first)).toBe("only once");
    expect(doneText(second)).toBe("only once");
    expect(doneText(third)).toBe("only once");
    expect(await modelRequests("run-dup")).toHaveLength(1);
  });

  it("resumes a run evicted after a tool step without running the tool again", async () => {
    const key = "agent:main:test-resume";
    await scriptModel("resume", [
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_w1",
            name: "write",
            arguments: { path: "notes/resume.md", content: "written once" },
          },
        ],
      },
      // The second model call hangs: the object is evicted while it waits.
      { type: "hang" },
      { type: "text", text: "Saved your note." },
    ]);
    const stub = sessionStub(key);
    expect(await stub.accept(webchatEvent(key, "save a note [scenario:resume]"))).toEqual({
      status: "accepted",
    });
    await waitFor(
      async () => (await modelRequests("resume")).length >= 2,
      15_000,
      "the second model call",
    );
    await abortAllDurableObjects();

    // The watchdog alarm brings the session back; it continues from its checkpoint.
    await runDurableObjectAlarm(sessionStub(key));
    await waitFor(
      async () =>
        (await sessionStub(key).history()).some((entry) => entry.text === "Saved your note."),
      15_000,
      "the final reply",
    );

    const requests = await modelRequests("resume");
    expect(requests).toHaveLength(3);
    const file = await readFile(env, "main", "notes/resume.md");
    expect(file?.content).toBe("written once");
    expect(file?.version).toBe(1);
    // The resumed model call saw the tool result from before the eviction.
    expect(JSON.stringify(requests[2]!.body)).toContain("call_w1");
    const history = await sessionStub(key).history();
    expect(history.filter((entry) => entry.role === "assistant")).toHaveLength(1);
  });

  it("steers a queued message into the active run and skips tool calls not yet started", async () => {
    const key = "agent:main:test-steer";
    await scriptModel("steer", [
      {
        type: "tool_calls",
        delayMs: 800,
        calls: [
          { id: "call_a", name: "session_status", arguments: {} },
          { id: "call_b", name: "session_status", arguments: {} },
        ],
      },
      { type: "text", text: "Got both messages." },
    ]);
    const stub = sessionStub(key);
    const firstStream = stub.chat(webchatEvent(key, "first [scenario:steer]"));
    await waitFor(
      async () => (await modelRequests("steer")).length >= 1,
      10_000,
      "the first model call",
    );
    const second = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "actually, also this")),
    );
    const first = await collectRunEvents(await firstStream);
    expect(doneText(first)).toBe("Got both messages.");
    expect(doneText(second)).toBe("Got both messages.");
    const requests = await modelRequests("steer");
    expect(requests).toHaveLength(2);
    const seen = JSON.stringify(requests[1]!.body);
    expect(seen).toContain("Skipped due to queued user message.");
    expect(seen).toContain("actually, also this");
  });

  it("says plainly when the model call fails and records no assistant answer", async () => {
    const key = "agent:main:test-fail";
    await scriptModel("fail", [
      { type: "error", status: 400, errorType: "invalid_request_error", message: "bad things" },
    ]);
    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "boom [scenario:fail]")),
    );
    const error = events.find((event) => event.type === "error");
    expect(error).toMatchObject({ type: "error", code: "bad_request" });
    // The web chat's history shows what the user was told, marked as a notice, never as an answer.
    const history = await sessionStub(key).history();
    expect(history.filter((entry) => entry.role === "assistant" && !entry.notice)).toHaveLength(0);
    expect(history.filter((entry) => entry.notice)).toHaveLength(1);
  });
});

describe("SessionDO commands", () => {
  it("answers /status on the fast path without a model call", async () => {
    const key = "agent:main:test-status";
    const events = await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "/status")),
    );
    const text = doneText(events) ?? "";
    expect(text).toContain("fakeanthropic/claude-test");
    expect(events.some((event) => event.type === "run-started")).toBe(false);
  });

  it("/new starts a fresh session: the model no longer sees earlier turns", async () => {
    const key = "agent:main:test-new";
    await scriptModel("new-1", [{ type: "text", text: "first answer" }]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "remember banana [scenario:new-1]")),
    );
    await collectRunEvents(await sessionStub(key).chat(webchatEvent(key, "/new")));
    await scriptModel("new-2", [{ type: "text", text: "fresh" }]);
    await collectRunEvents(
      await sessionStub(key).chat(webchatEvent(key, "what fruit? [scenario:new-2]")),
    );
    const [request] = await modelRequests("new-2");
    expect(JSON.stringify(request!.body.messages)).not.toContain("banana");
    // What /new saved (session-memory) comes back only as the startup context's daily note.
    expect(JSON.stringify(request!.body.system)).toMatch(
      /## Startup Context[\s\S]*memory\/\d{4}-\d{2}-\d{2}-\d{4}(-\d+)?\.md[\s\S]*remember banana/,
    );
  });
});
