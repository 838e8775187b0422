import { describe, expect, it } from "vitest";
import {
  callFakeModel,
  fakeReply,
  FAKE_REPLY_PREFIX,
} from "../../functions/agent/providers/fake.ts";
import { composeTurnText } from "../../functions/agent/turn-text.ts";
import type { Message, ToolSpec } from "../../functions/agent/types.ts";

const tool = (name: string, properties: Record<string, unknown>): ToolSpec => ({
  name,
  description: name,
  parameters: { type: "object", properties },
});
const TOOLS = [
  tool("read", { path: { type: "string" } }),
  tool("write", { path: { type: "string" }, content: { type: "string" } }),
  tool("web_fetch", { url: { type: "string" } }),
  tool("session_status", {}),
  tool("sessions_spawn", { task: { type: "string" }, label: { type: "string" } }),
];

const ask = (text: string, tools: ToolSpec[] = TOOLS) =>
  fakeReply({ system: "", messages: [{ role: "user", content: text }], tools });

describe("the demo fake model", () => {
  it("spawns a sub-agent for 'spawn a sub-agent to …'", () => {
    const reply = ask("spawn a sub-agent to check the weather");
    expect(reply.toolCalls).toEqual([
      {
        id: expect.any(String),
        name: "sessions_spawn",
        arguments: { task: "check the weather", label: "demo helper" },
      },
    ]);
  });

  it("always says it is the fake and echoes plain messages", () => {
    const reply = ask("hello world");
    expect(reply.text).toBe(`${FAKE_REPLY_PREFIX} You said: hello world`);
    expect(reply.toolCalls).toEqual([]);
    expect(reply.stopReason).toBe("end");
    expect(reply.usage.inputTokens).toBeGreaterThan(0);
  });

  it("answers a channel sender with their words, not with the untrusted-content fence", () => {
    const from = { channel: "line", chatType: "direct" as const, label: "Alice (U1)" };
    const plain = composeTurnText({ messages: [{ text: "hello from LINE", from }] });
    expect(plain).toContain("EXTERNAL_UNTRUSTED_CONTENT");
    expect(ask(plain).text).toBe(`${FAKE_REPLY_PREFIX} You said: hello from LINE`);

    const group = { channel: "telegram", chatType: "group" as const, label: "Bob (42)" };
    const busy = composeTurnText({
      messages: [{ text: "@bot what now?", from: group }],
      systemEvents: [{ text: "Carol reacted 👍" }],
      droppedSummary: ["an older message"],
      groupHistory: [{ sender: "Dave (7)", text: "lunch at noon" }],
    });
    const reply = ask(busy).text;
    expect(reply).toBe(`${FAKE_REPLY_PREFIX} You said: @bot what now?`);
    expect(reply).not.toMatch(/UNTRUSTED|Source:|reacted|lunch/);

    const read = composeTurnText({ messages: [{ text: "please read AGENTS.md", from }] });
    expect(ask(read).toolCalls[0]).toMatchObject({
      name: "read",
      arguments: { path: "AGENTS.md" },
    });
  });

  it("turns 'read AGENTS.md' into a read tool call", () => {
    const reply = ask("please read AGENTS.md.");
    expect(reply.text.startsWith(FAKE_REPLY_PREFIX)).toBe(true);
    expect(reply.stopReason).toBe("tool_use");
    expect(reply.toolCalls).toEqual([
      { id: "fake_call_1", name: "read", arguments: { path: "AGENTS.md" } },
    ]);
  });

  it("turns 'write notes.md: …' into a write call with the content", () => {
    expect(ask("write notes.md: buy milk\nand eggs").toolCalls[0]).toMatchObject({
      name: "write",
      arguments: { path: "notes.md", content: "buy milk\nand eggs" },
    });
  });

  it("turns 'fetch <url>' into web_fetch and 'session status' into session_status", () => {
    expect(ask("fetch https://example.com/page, thanks").toolCalls[0]).toMatchObject({
      name: "web_fetch",
      arguments: { url: "https://example.com/page" },
    });
    expect(ask("what is my session status?").toolCalls[0]).toMatchObject({
      name: "session_status",
      arguments: {},
    });
  });

  it("turns 'run `…`' into exec where the agent has a sandbox, and says so where it has none", () => {
    const withExec = [...TOOLS, tool("exec", { command: { type: "string" } })];
    expect(ask("please run `uname -a; read x` now", withExec).toolCalls).toMatchObject([
      { name: "exec", arguments: { command: "uname -a; read x" } },
    ]);
    expect(ask("run `ls`").text).toContain("the exec tool, but it is not available");
  });

  it("uses the parameter names the offered tool declares", () => {
    expect(
      ask("read a.md", [tool("read", { file_path: { type: "string" } })]).toolCalls[0]!.arguments,
    ).toEqual({ file_path: "a.md" });
  });

  it("says so when the tool is not offered instead of calling it", () => {
    const reply = ask("read AGENTS.md", []);
    expect(reply.toolCalls).toEqual([]);
    expect(reply.text).toContain("not available");
  });

  it("summarises the tool results on the next turn", () => {
    const messages: Message[] = [
      { role: "user", content: "read AGENTS.md" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "fake_call_1", name: "read", arguments: { path: "AGENTS.md" } }],
      },
      { role: "tool", toolCallId: "fake_call_1", name: "read", content: "# Agents\nBe helpful." },
    ];
    const reply = fakeReply({ system: "", messages, tools: TOOLS });
    expect(reply.toolCalls).toEqual([]);
    expect(reply.text).toBe(`${FAKE_REPLY_PREFIX} The read tool returned: # Agents Be helpful.`);
  });

  it("streams its text in several deltas that add up to the reply", async () => {
    const deltas: string[] = [];
    const result = await callFakeModel(
      {
        ref: "fake/x",
        providerId: "fake",
        modelId: "x",
        api: "fake",
        baseUrl: "",
        headers: {},
        maxTokens: 1,
        contextWindow: 1,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        idleTimeoutMs: 1,
        native: false,
        acceptsImages: false,
        cacheRetention: "none",
        reasoning: false,
      },
      {
        system: "",
        messages: [{ role: "user", content: "one two three four five six seven eight" }],
        tools: [],
        onTextDelta: (t) => deltas.push(t),
      },
    );
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.join("")).toBe(result.text);
  });
});
