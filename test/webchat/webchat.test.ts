import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../durable-objects/session-api.ts";
import {
  TOKEN,
  callWorker,
  configJson,
  scriptedSessions,
  usage,
} from "../openai/scripted-sessions.ts";
import { fetchOperatorPage } from "./operator-page.ts";

describe("web chat page", () => {
  it("serves one self-contained page whose script and style run only by this response's nonce", async () => {
    const { html, csp } = await fetchOperatorPage("/");
    // It uses the token-protected API, and the page itself holds no data.
    expect(html).toContain("/v1/chat/completions");
    expect(html).toContain("/v1/edgeclaw/history");

    const second = await fetchOperatorPage("/");
    expect(second.csp).not.toBe(csp);
  });
});

describe("history for the web chat", () => {
  const entries = [
    { role: "user", text: "hello", at: 1 },
    { role: "assistant", text: "hi!", at: 2 },
  ];

  it("returns the transcript of the session the `user` maps to", async () => {
    const sessions = scriptedSessions(
      () => [],
      () => entries,
    );
    const response = await callWorker(
      new Request(
        "https://edgeclaw.test/v1/edgeclaw/history?user=webchat-abc&model=openclaw%2Fdefault",
        {
          headers: { authorization: `Bearer ${TOKEN}` },
        },
      ),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: configJson({}) },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: "list",
      session_key: "agent:main:openai-user:webchat-abc",
      data: entries,
    });
    expect(sessions.historyCalls).toEqual(["agent:main:openai-user:webchat-abc"]);
  });

  it("needs the token and a user", async () => {
    const sessions = scriptedSessions(
      () => [],
      () => entries,
    );
    const bindings = { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: configJson({}) };
    const anonymous = await callWorker(
      new Request("https://edgeclaw.test/v1/edgeclaw/history?user=u"),
      bindings,
    );
    expect(anonymous.status).toBe(401);
    const noUser = await callWorker(
      new Request("https://edgeclaw.test/v1/edgeclaw/history", {
        headers: { authorization: `Bearer ${TOKEN}` },
      }),
      bindings,
    );
    expect(noUser.status).toBe(400);
    expect(sessions.historyCalls).toHaveLength(0);
  });
});

describe("tool activity for the web chat", () => {
  const events: RunEvent[] = [
    { type: "queued" },
    { type: "run-started", runId: "r1" },
    { type: "tool", callId: "t1", name: "web_fetch", phase: "start" },
    { type: "tool", callId: "t1", name: "web_fetch", phase: "end", preview: "200 OK" },
    { type: "text-delta", text: "Done." },
    { type: "done", runId: "r1", text: "Done.", usage, modelRef: "fake/scripted" },
  ];

  async function stream(headers: Record<string, string>) {
    const sessions = scriptedSessions(() => events);
    const response = await callWorker(
      new Request("https://edgeclaw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, ...headers },
        body: JSON.stringify({
          model: "openclaw/default",
          user: "webchat-1",
          stream: true,
          messages: [{ role: "user", content: "fetch it" }],
        }),
      }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: configJson({}) },
    );
    return { text: await response.text(), sessions };
  }

  it("sends tool and status events, as named SSE events, when x-edgeclaw-events asks for them", async () => {
    const { text, sessions } = await stream({
      "x-edgeclaw-events": "tools",
      "x-openclaw-message-channel": "webchat",
    });
    const named = [...text.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => [
      m[1],
      JSON.parse(m[2]!),
    ]);
    expect(named).toEqual([
      ["status", { state: "queued" }],
      ["status", { state: "running" }],
      ["tool", { callId: "t1", name: "web_fetch", phase: "start", isError: false }],
      [
        "tool",
        { callId: "t1", name: "web_fetch", phase: "end", isError: false, preview: "200 OK" },
      ],
      ["status", { state: "done", modelRef: "fake/scripted" }],
    ]);
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(sessions.chats[0]!.event.envelope.channel).toBe("webchat");
    expect(sessions.chats[0]!.event.envelope.route.channel).toBe("webchat");
  });

  it("tells the page to clear text from a failed model attempt", async () => {
    const sessions = scriptedSessions(() => [
      { type: "text-delta", text: "bro" },
      { type: "text-reset" },
      { type: "text-delta", text: "fine" },
      { type: "done", runId: "r", text: "fine", usage, modelRef: "fake/b" },
    ]);
    const response = await callWorker(
      new Request("https://edgeclaw.test/v1/chat/completions", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "x-edgeclaw-events": "tools" },
        body: JSON.stringify({
          model: "openclaw",
          stream: true,
          messages: [{ role: "user", content: "q" }],
        }),
      }),
      { SESSIONS: sessions.namespace, EDGECLAW_CONFIG: configJson({}) },
    );
    const text = await response.text();
    expect(text.indexOf('event: status\ndata: {"state":"reset"}')).toBeGreaterThan(
      text.indexOf('"content":"bro"'),
    );
    expect(text.indexOf('"content":"fine"')).toBeGreaterThan(text.indexOf('"state":"reset"'));
  });

  it("sends none of them otherwise", async () => {
    const { text } = await stream({});
    expect(text).not.toContain("event:");
    expect(text).toContain('"content":"Done."');
  });
});
