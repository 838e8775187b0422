import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { Message } from "../../functions/agent/types.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  webchatEvent,
} from "./helpers.ts";

/**
 * Session pruning through a real run (durable-objects/session/run/pruning.ts): a session on the
 * suite's Anthropic model (pruning "cache-ttl" by default, the cache's 5-minute ttl) whose last
 * model call is two hours old holds 4 large and 120 mid-size tool results. The next run's first
 * request has the large ones trimmed and the oldest cleared until under half the window; the
 * request after its tool round shows the same prefix (the prompt cache stays valid); the
 * transcript keeps every result whole.
 */

type Sent = { role: string; content: unknown };

function toolResults(request: { body: Record<string, unknown> }): Map<string, string> {
  const results = new Map<string, string>();
  for (const message of request.body.messages as Sent[])
    if (Array.isArray(message.content))
      for (const block of message.content as Array<Record<string, unknown>>)
        if (block.type === "tool_result")
          results.set(String(block.tool_use_id), String(block.content));
  return results;
}

const big = Array.from({ length: 4 }, (_, i) => `big-${i}`);
const mid = Array.from({ length: 120 }, (_, i) => `mid-${i}`);

/** 4 results of 60,000 characters and 120 of 3,900, all from a model call two hours ago. */
async function seedOldToolResults(stub: ReturnType<typeof sessionStub>) {
  const twoHoursAgo = Date.now() - 2 * 3_600_000;
  await runInDurableObject(stub, (_instance, state) => {
    const store = new SessionStore(state.storage);
    const sessionId = store.meta.get("sessionId")!;
    const append = (message: Message) =>
      store.transcript.append(sessionId, null, message, twoHoursAgo);
    for (const id of [...big, ...mid]) {
      append({ role: "assistant", content: "", toolCalls: [{ id, name: "exec", arguments: {} }] });
      const size = id.startsWith("big") ? 60_000 : 3_900;
      append({ role: "tool", toolCallId: id, name: "exec", content: `${id}:`.padEnd(size, "x") });
    }
    append({ role: "assistant", content: "read them all" });
    append({ role: "user", content: "thanks" });
    append({ role: "assistant", content: "sure" });
    append({ role: "assistant", content: "anything else?" });
  });
  return { big, mid };
}

describe("session pruning in a run", () => {
  it("trims and clears old tool results in what the model is sent, keeps the prefix stable within the run, and never rewrites the transcript", async () => {
    const key = `agent:main:pruning-${crypto.randomUUID()}`;
    const stub = sessionStub(key);
    const first = `prune-a-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(first, [{ type: "text", text: "hello" }]);
    await collectRunEvents(await stub.chat(webchatEvent(key, `hi [scenario:${first}]`)));

    const { big, mid } = await seedOldToolResults(stub);

    const second = `prune-b-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(second, [
      { type: "tool_calls", calls: [{ name: "no_such_tool", arguments: {} }] },
      { type: "text", text: "pruned answer" },
    ]);
    await collectRunEvents(await stub.chat(webchatEvent(key, `and now? [scenario:${second}]`)));
    const [before, after] = await modelRequests(second);
    const sent = toolResults(before!);
    for (const id of big) expect(sent.get(id)!.length, id).toBeLessThan(3_200);
    const cleared = mid.filter((id) => sent.get(id) === "[Old tool result content cleared]");
    expect(cleared.length).toBeGreaterThan(0);
    expect(cleared).toEqual(mid.slice(0, cleared.length));
    expect(sent.get(mid.at(-1)!)).toHaveLength(3_900);
    // Unpruned, the results alone are 708,000 characters; about half of the window is left.
    expect(JSON.stringify(before!.body).length).toBeLessThan(480_000);

    // The second request of the run (after its tool round) repeats the first one's prefix.
    const later = toolResults(after!);
    for (const [id, content] of sent) expect(later.get(id), id).toBe(content);

    const stored = await runInDurableObject(stub, (_instance, state) => {
      const store = new SessionStore(state.storage);
      const sessionId = store.meta.get("sessionId")!;
      const rows = store.transcript.recent(sessionId).map((row) => row.message);
      return {
        lengths: rows.flatMap((m) =>
          m.role === "tool" && m.toolCallId.startsWith("big") ? [m.content.length] : [],
        ),
        decisions: store.meta.getJson(`pruning:${sessionId}`),
      };
    });
    expect(stored.lengths).toEqual([60_000, 60_000, 60_000, 60_000]);
    expect(stored.decisions!.hard).toEqual(expect.arrayContaining(cleared));
    const context = await collectRunEvents(await stub.chat(webchatEvent(key, "/context")));
    expect(JSON.stringify(context)).toContain(
      `old tool results sent trimmed: ${stored.decisions!.soft.length}, cleared: ${stored.decisions!.hard.length}`,
    );
  });

  it("is off by default for a model that is not Anthropic's: the results go whole", async () => {
    const key = `agent:main:pruning-openai-${crypto.randomUUID()}`;
    const stub = sessionStub(key);
    await collectRunEvents(await stub.chat(webchatEvent(key, "/model fakeopenai/gpt-test")));
    const first = `prune-o-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(first, [{ type: "text", text: "hello" }]);
    await collectRunEvents(await stub.chat(webchatEvent(key, `hi [scenario:${first}]`)));
    await seedOldToolResults(stub);
    const second = `prune-p-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(second, [{ type: "text", text: "whole" }]);
    await collectRunEvents(await stub.chat(webchatEvent(key, `and now? [scenario:${second}]`)));
    const [request] = await modelRequests(second);
    const sent = (
      request!.body.messages as Array<{ role: string; tool_call_id?: string; content: string }>
    )
      .filter((message) => message.role === "tool")
      .map((message) => message.content.length);
    expect(sent.filter((length) => length === 60_000)).toHaveLength(4);
    expect(sent.filter((length) => length === 3_900)).toHaveLength(120);
  });
});
