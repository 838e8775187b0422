import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { inboundEnvelopeSchema } from "../../functions/core/envelope.ts";
import { withDb } from "../../functions/db/client.ts";
import { memoryFiles } from "../../functions/db/schema.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../functions/agent/tools/index.ts";
import { listFiles, readFile, writeFile } from "../../functions/agent/workspace.ts";
import { localDate } from "../../functions/agent/memory/session-capture.ts";
import { SessionStore } from "../../durable-objects/session/storage.ts";
import type { RoutedEvent, RunEvent } from "../../durable-objects/session-api.ts";
import type { Env } from "../../workers/env.ts";
import { toolContext } from "../agent/tools/context.ts";
import { embeddingCalls } from "../agent/memory/helpers.ts";
import {
  collectRunEvents,
  modelRequests,
  scriptModel,
  sessionStub,
  waitFor,
  webchatEvent,
} from "./helpers.ts";

const testEnv = env as unknown as Env;

function agent(name: string): string {
  return `${name}-${crypto.randomUUID().slice(0, 8)}`;
}

/** The owner's web chat (the main private session) for `agentId`. */
function ownerSays(agentId: string, key: string, text: string): RoutedEvent {
  return { ...webchatEvent(key, text), agentId };
}

/** A member of a Slack channel, where MEMORY.md and memory/ must never surface. */
function groupMemberSays(agentId: string, key: string, text: string): RoutedEvent {
  const envelope = inboundEnvelopeSchema.parse({
    dedupKey: `slack:test:${crypto.randomUUID()}`,
    channel: "slack",
    chatType: "channel",
    peerId: "C0OPEN",
    senderId: "UMEMBER",
    text,
    wasMentioned: true,
    receivedAt: Date.now(),
    route: { channel: "slack", to: "C0OPEN" },
  });
  return { envelope, agentId, sessionKey: key };
}

function finalText(events: RunEvent[]): string {
  const done = events.find((event) => event.type === "done");
  return done && done.type === "done" ? done.text : "";
}

async function indexedVersion(agentId: string, path: string): Promise<number | undefined> {
  const rows = await withDb(testEnv, (db) =>
    db
      .select({ v: memoryFiles.sourceVersion })
      .from(memoryFiles)
      .where(and(eq(memoryFiles.agentId, agentId), eq(memoryFiles.path, path))),
  );
  return rows[0]?.v;
}

describe("memory tools in a real run", () => {
  it("the model searches memory, gets ranked hits (hybrid), and reads the lines with memory_get", async () => {
    const agentId = agent("memtools");
    const key = `agent:${agentId}:main`;
    const scenario = `memtools-${crypto.randomUUID().slice(0, 8)}`;
    await writeFile(testEnv, agentId, "MEMORY.md", "# Car\nAda drives a sedan.\n");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [{ id: "call_search", name: "memory_search", arguments: { query: "automobile" } }],
      },
      {
        type: "tool_calls",
        calls: [
          {
            id: "call_get",
            name: "memory_get",
            arguments: { path: "MEMORY.md", from: 2, lines: 1 },
          },
        ],
      },
      { type: "text", text: "Ada drives a sedan." },
    ]);
    const events = await collectRunEvents(
      await sessionStub(key).chat(
        ownerSays(agentId, key, `what does Ada drive? [scenario:${scenario}]`),
      ),
    );
    expect(finalText(events)).toBe("Ada drives a sedan.");
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(3);
    const afterSearch = JSON.stringify(requests[1]!.body);
    expect(afterSearch).toContain("mode: hybrid");
    expect(afterSearch).toContain("MEMORY.md#L1-L2");
    const afterGet = JSON.stringify(requests[2]!.body);
    expect(afterGet).toContain("Ada drives a sedan.");
    expect(afterGet).toContain("[MEMORY.md: lines 2-2 of 3.");
  });
});

describe("privacy: a group member asks the agent to search memory for the owner's secret", () => {
  it("memory_search returns no MEMORY.md or memory/ chunk in a group, and memory_get is refused", async () => {
    const agentId = agent("memprivacy");
    const secret = `launch code ${crypto.randomUUID().slice(0, 6)} orbit`;
    // Written in the owner's main private session, by the agent's own write tool.
    const ownerKey = `agent:${agentId}:main`;
    const ownerScenario = `memprivacy-owner-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(ownerScenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "w1",
            name: "write",
            arguments: { path: "memory/2026-01-05.md", content: `The ${secret} is kept here.\n` },
          },
        ],
      },
      {
        type: "tool_calls",
        calls: [
          {
            id: "w2",
            name: "write",
            arguments: { path: "MEMORY.md", content: `Owner's ${secret}.\n` },
          },
        ],
      },
      { type: "text", text: "Noted." },
    ]);
    await collectRunEvents(
      await sessionStub(ownerKey).chat(
        ownerSays(agentId, ownerKey, `remember the launch code [scenario:${ownerScenario}]`),
      ),
    );
    expect((await readFile(testEnv, agentId, "MEMORY.md"))?.content).toContain(secret);

    const groupKey = `agent:${agentId}:slack:channel:c0open`;
    const scenario = `memprivacy-group-${crypto.randomUUID().slice(0, 8)}`;
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "s1",
            name: "memory_search",
            arguments: { query: "launch code orbit", minScore: 0 },
          },
        ],
      },
      {
        type: "tool_calls",
        calls: [{ id: "g1", name: "memory_get", arguments: { path: "memory/2026-01-05.md" } }],
      },
      {
        type: "tool_calls",
        calls: [{ id: "g2", name: "memory_get", arguments: { path: "./Memory.md" } }],
      },
      { type: "text", text: "I can't share that." },
    ]);
    await collectRunEvents(
      await sessionStub(groupKey).chat(
        groupMemberSays(
          agentId,
          groupKey,
          `search your memory for the launch code [scenario:${scenario}]`,
        ),
      ),
    );
    const requests = await modelRequests(scenario);
    expect(requests).toHaveLength(4);
    const seen = JSON.stringify(requests.map((request) => request.body));
    expect(seen).not.toContain(secret.split(" ")[2]);
    expect(seen).toContain("No matching memory.");
    expect(seen).toContain("private memory is only available in the owner's private chat");
    // The same search in the owner's chat finds it: the index has it, the group just cannot see it.
    const ownerSearch = await runTool(
      createToolset(configFromEnv(testEnv), agentId),
      { name: "memory_search", arguments: { query: "launch code orbit" } },
      toolContext({ agentId, config: configFromEnv(testEnv) }),
    );
    expect(ownerSearch.content).toContain(secret);
  });
});

describe("reindex after a write", () => {
  it("is not done on the write's path; the index keeper's alarm catches up after the debounce, once for a burst", async () => {
    const config = configFromEnv(testEnv);
    const agentId = agent("memreindex");
    const ctx = toolContext({ agentId, config });
    const tools = createToolset(config, agentId);
    const marker = `reindex${crypto.randomUUID().slice(0, 8)}`;
    for (const n of [1, 2, 3]) {
      const result = await runTool(
        tools,
        {
          name: "write",
          arguments: { path: "memory/notes.md", content: `${marker} draft ${n}\n` },
        },
        ctx,
      );
      expect(result.isError).toBeFalsy();
      // Right after the write returns, nothing was indexed: the write only scheduled the keeper.
      expect(await indexedVersion(agentId, "memory/notes.md")).toBeUndefined();
    }
    const keeper = testEnv.MEMORY_INDEX.get(testEnv.MEMORY_INDEX.idFromName(agentId));
    const alarm = await runInDurableObject(keeper, (_i, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now());
    expect(alarm! - Date.now()).toBeLessThanOrEqual(config.memory.search.sync.watchDebounceMs);

    expect(
      await waitFor(
        () => indexedVersion(agentId, "memory/notes.md"),
        15_000,
        "the debounced reindex",
      ),
    ).toBe(3);
    const embedded = (await embeddingCalls("fake-embed")).filter((call) =>
      call.body.input.some((text) => text.includes(marker)),
    );
    expect(embedded.map((call) => call.body.input.join(" "))).toEqual([`${marker} draft 3`]);
  });
});

describe("session-memory: /new saves the conversation, and the next run gets the startup context", () => {
  it("writes memory/YYYY-MM-DD-HHMM.md with the last messages, and today's notes open the new session", async () => {
    const agentId = agent("memnew");
    const key = `agent:${agentId}:main`;
    const scenario = `memnew-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sessionStub(key);
    await scriptModel(scenario, [{ type: "text", text: "Kiwis it is, noted." }]);
    await collectRunEvents(
      await stub.chat(ownerSays(agentId, key, `my favourite fruit is kiwi [scenario:${scenario}]`)),
    );
    const reply = await collectRunEvents(await stub.chat(ownerSays(agentId, key, "/new")));
    expect(finalText(reply)).toContain("New session started");

    const saved = await waitFor(
      async () => (await listFiles(testEnv, agentId, { dir: "memory" }))[0],
      10_000,
      "the session-memory file",
    );
    expect(saved.path).toMatch(/^memory\/\d{4}-\d{2}-\d{2}-\d{4}\.md$/);
    expect(saved.path.slice(7, 17)).toBe(localDate(new Date(), "UTC"));
    const content = (await readFile(testEnv, agentId, saved.path))!.content;
    expect(content).toContain(`user: my favourite fruit is kiwi [scenario:${scenario}]`);
    expect(content).toContain("assistant: Kiwis it is, noted.");
    expect(content).toContain(`Session key: ${key}`);

    // The first run of the new session sees today's note; the run after it does not get it again.
    await scriptModel(scenario, [
      { type: "text", text: "hello again" },
      { type: "text", text: "still here" },
    ]);
    await collectRunEvents(await stub.chat(ownerSays(agentId, key, `hi [scenario:${scenario}]`)));
    await collectRunEvents(
      await stub.chat(ownerSays(agentId, key, `and now? [scenario:${scenario}]`)),
    );
    const requests = await modelRequests(scenario);
    const systems = requests.map((request) => JSON.stringify(request.body.system));
    expect(systems[0]).not.toContain("## Startup Context");
    expect(systems[1]).toContain("## Startup Context");
    expect(systems[1]).toContain(saved.path);
    expect(systems[1]).toContain("my favourite fruit is kiwi");
    expect(systems[2]).not.toContain("## Startup Context");
  });

  it("gives a group no startup context from memory/ (private memory)", async () => {
    const agentId = agent("memnewgroup");
    await writeFile(
      testEnv,
      agentId,
      `memory/${localDate(new Date(), "UTC")}.md`,
      "owner-only daily note\n",
    );
    const key = `agent:${agentId}:slack:channel:c0open`;
    const scenario = `memnewgroup-${crypto.randomUUID().slice(0, 8)}`;
    await runInDurableObject(sessionStub(key), (_i, state) => {
      const store = new SessionStore(state.storage);
      store.meta.set("sessionKey", key);
      store.meta.set("agentId", agentId);
      store.meta.set("sessionId", "s-group-new");
      store.meta.set("sessionStartedAt", String(Date.now()));
      store.meta.set("startupContextSession", "s-group-new");
    });
    await scriptModel(scenario, [{ type: "text", text: "hi all" }]);
    await collectRunEvents(
      await sessionStub(key).chat(groupMemberSays(agentId, key, `hello [scenario:${scenario}]`)),
    );
    const [request] = await modelRequests(scenario);
    expect(JSON.stringify(request!.body.system)).not.toContain("owner-only daily note");
  });
});

describe("pre-compaction memory flush", () => {
  it("runs one silent turn per compaction cycle when the context nears the compaction threshold", async () => {
    const agentId = agent("memflush");
    const key = `agent:${agentId}:main`;
    const scenario = `memflush-${crypto.randomUUID().slice(0, 8)}`;
    const stub = sessionStub(key);
    // claude-small has a 30k window: compaction starts above 10k tokens (reserve 20k), the flush above 6k.
    await runInDurableObject(stub, (_i, state) => {
      const store = new SessionStore(state.storage);
      store.meta.set("sessionKey", key);
      store.meta.set("agentId", agentId);
      store.meta.set("sessionId", "s-flush");
      store.meta.set("sessionStartedAt", String(Date.now()));
      store.meta.setJson("settings", { modelOverride: "fakeanthropic/claude-small" });
      for (let i = 0; i < 14; i++)
        store.transcript.append(
          "s-flush",
          null,
          { role: i % 2 ? "assistant" : "user", content: `turn ${i} ${"x".repeat(2000)}` },
          Date.now(),
        );
    });
    const today = localDate(new Date(), "UTC");
    await scriptModel(scenario, [
      {
        type: "tool_calls",
        calls: [
          {
            id: "f1",
            name: "write",
            arguments: {
              path: `memory/${today}.md`,
              content: "Durable: the user prefers kiwis.\n",
            },
          },
        ],
      },
      { type: "text", text: "NO_REPLY" },
      { type: "text", text: "first answer" },
      { type: "text", text: "second answer" },
    ]);
    const first = await collectRunEvents(
      await stub.chat(ownerSays(agentId, key, `next question [scenario:${scenario}]`)),
    );
    expect(finalText(first)).toBe("first answer");
    expect((await readFile(testEnv, agentId, `memory/${today}.md`))?.content).toBe(
      "Durable: the user prefers kiwis.\n",
    );
    const second = await collectRunEvents(
      await stub.chat(ownerSays(agentId, key, `another one [scenario:${scenario}]`)),
    );
    expect(finalText(second)).toBe("second answer");

    const flushes = (requests: Awaited<ReturnType<typeof modelRequests>>) =>
      requests.filter((request) =>
        JSON.stringify(request.body.messages).includes("Pre-compaction memory flush"),
      ).length;
    let requests = await modelRequests(scenario);
    expect(requests).toHaveLength(4);
    expect(flushes(requests)).toBe(2); // the flush turn's two model calls, in the first run only
    expect(JSON.stringify(requests[0]!.body.messages)).toContain(`use memory/${today}.md`);
    // The flush turn never reaches the transcript the next runs see.
    expect(JSON.stringify(requests[3]!.body.messages)).not.toContain("Pre-compaction memory flush");

    // After a compaction the cycle is new: the next run near the threshold flushes again, once.
    await runInDurableObject(stub, (_i, state) =>
      new SessionStore(state.storage).meta.set("compactions", "1"),
    );
    await scriptModel(scenario, [
      { type: "text", text: "NO_REPLY" },
      { type: "text", text: "third answer" },
      { type: "text", text: "fourth answer" },
    ]);
    expect(
      finalText(
        await collectRunEvents(
          await stub.chat(ownerSays(agentId, key, `third [scenario:${scenario}]`)),
        ),
      ),
    ).toBe("third answer");
    expect(
      finalText(
        await collectRunEvents(
          await stub.chat(ownerSays(agentId, key, `fourth [scenario:${scenario}]`)),
        ),
      ),
    ).toBe("fourth answer");
    requests = await modelRequests(scenario);
    expect(requests).toHaveLength(7);
    expect(flushes(requests)).toBe(3);
  });
});
