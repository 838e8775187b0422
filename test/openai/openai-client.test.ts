import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../durable-objects/session-api.ts";
import {
  TOKEN,
  answer,
  callWorker,
  configJson,
  scriptedSessions,
  usage,
} from "./scripted-sessions.ts";

/**
 * The HTTP API as the official `openai` client sees it, with the SessionDO replaced by a scripted
 * RunEvent stream at its RPC boundary.
 */

function clientFor(
  sessions: ReturnType<typeof scriptedSessions>,
  config: Record<string, unknown> = {},
  apiKey = TOKEN,
) {
  return new OpenAI({
    baseURL: "https://edgeclaw.test/v1",
    apiKey,
    maxRetries: 0,
    fetch: (url, init) =>
      callWorker(new Request(url, init), {
        SESSIONS: sessions.namespace,
        EDGECLAW_CONFIG: configJson(config),
      }),
  });
}

describe("chat completions through the openai client", () => {
  it("answers a non-streaming request with a chat.completion and usage", async () => {
    const sessions = scriptedSessions(() => answer("Hello there!", ["Hello", " there!"]));
    const completion = await clientFor(sessions).chat.completions.create({
      model: "openclaw/default",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("openclaw/default");
    expect(completion.choices[0]?.message).toMatchObject({
      role: "assistant",
      content: "Hello there!",
    });
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({
      prompt_tokens: 15,
      completion_tokens: 5,
      total_tokens: 20,
    });

    expect(sessions.chats).toHaveLength(1);
    const { sessionKey, event } = sessions.chats[0]!;
    expect(event.agentId).toBe("main");
    expect(sessionKey).toBe(event.sessionKey);
    expect(sessionKey).toMatch(/^agent:main:openai:[0-9a-f-]{36}$/);
    expect(event.envelope).toMatchObject({
      channel: "openai",
      chatType: "direct",
      text: "hi",
      route: { channel: "openai" },
    });
    expect(event.overrides).toBeUndefined();
  });

  it("streams a role delta, content deltas, a stop chunk and a usage chunk", async () => {
    const sessions = scriptedSessions(() => answer("one two three", ["one", " two", " three"]));
    const stream = await clientFor(sessions).chat.completions.create({
      model: "openclaw",
      messages: [{ role: "user", content: "count" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("one two three");
    const finishes = chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean);
    expect(finishes).toEqual(["stop"]);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 5, total_tokens: 20 });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it("ends the raw stream with data: [DONE] and never leaks tool activity to OpenAI clients", async () => {
    const events: RunEvent[] = [
      { type: "run-started", runId: "r" },
      { type: "tool", callId: "c1", name: "web_fetch", phase: "start" },
      { type: "tool", callId: "c1", name: "web_fetch", phase: "end" },
      { type: "text-delta", text: "fetched" },
      { type: "done", runId: "r", text: "fetched", usage, modelRef: "fake/x" },
    ];
    const sessions = scriptedSessions(() => events);
    const response = await callWorker(
      new Request("https://edgeclaw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "openclaw",
          stream: true,
          messages: [{ role: "user", content: "go" }],
        }),
      }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: configJson({}) },
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const body = await response.text();
    expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(body).not.toContain("web_fetch");
    expect(body).not.toContain("event:");
  });

  it("derives a stable session from `user` and passes x-openclaw-model as an override", async () => {
    const sessions = scriptedSessions(() => answer("ok"));
    const client = clientFor(sessions, {
      agents: { list: [{ id: "main" }, { id: "research", default: true }] },
    });
    const headers = { "x-openclaw-model": "anthropic/claude-sonnet-4-5" };
    for (let i = 0; i < 2; i++) {
      await client.chat.completions.create(
        {
          model: "openclaw/default",
          user: "conv:42",
          messages: [{ role: "user", content: `turn ${i}` }],
        },
        { headers },
      );
    }
    expect(sessions.chats.map((c) => c.sessionKey)).toEqual([
      "agent:research:openai-user:conv:42",
      "agent:research:openai-user:conv:42",
    ]);
    expect(sessions.chats[0]!.event.agentId).toBe("research");
    expect(sessions.chats[0]!.event.overrides).toEqual({ model: "anthropic/claude-sonnet-4-5" });
    expect(sessions.chats[0]!.event.envelope.dedupKey).not.toBe(
      sessions.chats[1]!.event.envelope.dedupKey,
    );
  });

  it("routes openclaw/<id>, openclaw:<id>, agent:<id> and x-openclaw-agent-id to that agent", async () => {
    const sessions = scriptedSessions(() => answer("ok"));
    const client = clientFor(sessions, { agents: { list: [{ id: "main" }, { id: "ops" }] } });
    const ask = (model: string, headers: Record<string, string> = {}) =>
      client.chat.completions.create(
        { model, messages: [{ role: "user", content: "x" }] },
        { headers },
      );
    await ask("openclaw/ops");
    await ask("openclaw:ops");
    await ask("agent:ops");
    await ask("openclaw", { "x-openclaw-agent-id": "ops" });
    await ask("openclaw");
    expect(sessions.chats.map((c) => c.event.agentId)).toEqual([
      "ops",
      "ops",
      "ops",
      "ops",
      "main",
    ]);
  });

  it("uses x-openclaw-session-key as given, scoping a bare key to the agent", async () => {
    const sessions = scriptedSessions(() => answer("ok"));
    const client = clientFor(sessions);
    await client.chat.completions.create(
      { model: "openclaw", messages: [{ role: "user", content: "x" }] },
      { headers: { "x-openclaw-session-key": "main" } },
    );
    await client.chat.completions.create(
      { model: "openclaw", messages: [{ role: "user", content: "x" }] },
      { headers: { "x-openclaw-session-key": "agent:main:team-room" } },
    );
    expect(sessions.chats.map((c) => c.sessionKey)).toEqual([
      "agent:main:main",
      "agent:main:team-room",
    ]);
  });

  it("gives a retried request with the same Idempotency-Key the same session and dedup key", async () => {
    const sessions = scriptedSessions(() => answer("ok"));
    const client = clientFor(sessions);
    for (let i = 0; i < 2; i++) {
      await client.chat.completions.create(
        { model: "openclaw", messages: [{ role: "user", content: "once" }] },
        { headers: { "Idempotency-Key": "req-123" } },
      );
    }
    const [a, b] = sessions.chats;
    expect(a!.sessionKey).toBe(b!.sessionKey);
    expect(a!.event.envelope.dedupKey).toBe("openai:idem:req-123");
    expect(b!.event.envelope.dedupKey).toBe("openai:idem:req-123");
  });

  it("injects earlier messages as context only in a fresh session, and caller instructions always", async () => {
    const sessions = scriptedSessions(() => answer("ok"));
    const client = clientFor(sessions);
    const messages = [
      { role: "system" as const, content: "Answer in French." },
      { role: "user" as const, content: "My name is Ada." },
      { role: "assistant" as const, content: "Nice to meet you, Ada." },
      { role: "user" as const, content: "What is my name?" },
    ];
    await client.chat.completions.create({ model: "openclaw", messages });
    await client.chat.completions.create({ model: "openclaw", messages, user: "u1" });
    const fresh = sessions.chats[0]!.event.envelope.text;
    expect(fresh).toContain("[Instructions from the API caller]\nAnswer in French.");
    expect(fresh).toContain(
      "[Chat messages since your last reply - for context]\nUser: My name is Ada.\nAssistant: Nice to meet you, Ada.",
    );
    expect(fresh.endsWith("[Current message - respond to this]\nWhat is my name?")).toBe(true);
    const persistent = sessions.chats[1]!.event.envelope.text;
    expect(persistent).not.toContain("My name is Ada.");
    expect(persistent).toContain("Answer in French.");
    expect(persistent.endsWith("What is my name?")).toBe(true);
  });

  it("reports a run without a configured model as a 503 naming not_configured", async () => {
    const sessions = scriptedSessions(() => [
      {
        type: "error",
        code: "not_configured",
        message: "No model is configured: set agents.defaults.model",
      },
    ]);
    const error = await clientFor(sessions)
      .chat.completions.create({ model: "openclaw", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("not_configured");
  });

  it("surfaces a failed run inside a stream as an error the client throws", async () => {
    const sessions = scriptedSessions(() => [
      { type: "text-delta", text: "partial" },
      { type: "error", code: "model_failed", message: "upstream model failed" },
    ]);
    const stream = await clientFor(sessions).chat.completions.create({
      model: "openclaw",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(seen.join("")).toBe("partial");
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toContain("upstream model failed");
  });

  it("drops text from a failed model attempt when the run retries (text-reset)", async () => {
    const events: RunEvent[] = [
      { type: "text-delta", text: "half an ans" },
      { type: "text-reset" },
      { type: "text-delta", text: "The full answer." },
      { type: "done", runId: "r", text: "The full answer.", usage, modelRef: "fake/b" },
    ];
    const client = clientFor(scriptedSessions(() => events));
    const completion = await client.chat.completions.create({
      model: "openclaw",
      messages: [{ role: "user", content: "q" }],
    });
    expect(completion.choices[0]?.message.content).toBe("The full answer.");

    const stream = await client.chat.completions.create({
      model: "openclaw",
      messages: [{ role: "user", content: "q" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    // An OpenAI stream cannot retract chunks: the retried answer starts a new paragraph.
    expect(text).toBe("half an ans\n\nThe full answer.");
  });

  it("starts a new paragraph for text from the model step after a tool call", async () => {
    const events: RunEvent[] = [
      { type: "text-delta", text: "Let me check." },
      { type: "tool", callId: "c1", name: "read", phase: "start" },
      { type: "tool", callId: "c1", name: "read", phase: "end" },
      { type: "text-delta", text: "It says hi." },
      { type: "done", runId: "r", text: "It says hi.", usage, modelRef: "fake/x" },
    ];
    const stream = await clientFor(scriptedSessions(() => events)).chat.completions.create({
      model: "openclaw",
      messages: [{ role: "user", content: "q" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Let me check.\n\nIt says hi.");
  });

  it("lists agent targets on /v1/models and resolves one by id", async () => {
    const sessions = scriptedSessions(() => []);
    const client = clientFor(sessions, { agents: { list: [{ id: "main" }, { id: "ops" }] } });
    const models = [];
    for await (const model of client.models.list()) models.push(model.id);
    expect(models).toEqual(["openclaw", "openclaw/default", "openclaw/main", "openclaw/ops"]);
    const one = await client.models.retrieve("openclaw/ops");
    expect(one).toMatchObject({ id: "openclaw/ops", object: "model" });
    expect(sessions.chats).toHaveLength(0);
  });
});
