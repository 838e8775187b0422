import { describe, expect, it } from "vitest";
import { handleCommandMessage, type CommandContext } from "../../functions/commands/execute.ts";
import { parseCommandMessage } from "../../functions/commands/parse.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { MemorySession } from "./memory-session.ts";

const config = parseConfig({
  agents: {
    defaults: {
      model: "anthropic/claude-sonnet-4-6",
      models: { "anthropic/claude-opus-4-6": { alias: "opus" } },
    },
  },
  models: { providers: { openai: { models: [{ id: "gpt-5.4" }] } } },
});

function ctx(overrides: Partial<CommandContext> = {}): CommandContext {
  return {
    config,
    agentId: "main",
    sessionKey: "agent:main:main",
    sender: {
      channel: "slack",
      accountId: "default",
      senderId: "U1",
      senderName: "Ada",
      chatType: "direct",
    },
    senderIsOwner: false,
    now: 1_000 + 2 * 3_600_000 + 5 * 60_000,
    ...overrides,
  };
}

const authorized = { commandAuthorized: true };
const unauthorized = { commandAuthorized: false };

describe("parseCommandMessage", () => {
  it("separates commands, directive-only messages and text", () => {
    expect(parseCommandMessage("/status", true)).toMatchObject({
      kind: "command",
      command: { name: "status" },
    });
    expect(parseCommandMessage("/think: high", true)).toEqual({
      kind: "directives",
      directives: [{ name: "think", args: ["high"] }],
    });
    expect(parseCommandMessage("/think high /verbose on", true)).toMatchObject({
      kind: "directives",
      directives: [{ name: "think" }, { name: "verbose" }],
    });
    expect(parseCommandMessage("/t:low explain this", true)).toEqual({
      kind: "message",
      text: "explain this",
      directives: [{ name: "think", args: ["low"] }],
      inlineCommands: [],
    });
    expect(parseCommandMessage("/unknown thing", true)).toMatchObject({
      kind: "message",
      text: "/unknown thing",
    });
    expect(parseCommandMessage("/think hard about this", true)).toMatchObject({
      kind: "message",
      text: "/think hard about this",
      directives: [],
    });
  });

  it("unauthorized: command-only messages are ignored, directives stay plain text", () => {
    expect(parseCommandMessage("/reset", false)).toEqual({ kind: "ignore" });
    expect(parseCommandMessage("/status", false)).toEqual({ kind: "ignore" });
    expect(parseCommandMessage("/think high", false)).toEqual({
      kind: "message",
      text: "/think high",
      directives: [],
      inlineCommands: [],
    });
    expect(parseCommandMessage("hi /status", false)).toEqual({
      kind: "message",
      text: "hi /status",
      directives: [],
      inlineCommands: [],
    });
  });
});

describe("commands (fast path, no model)", () => {
  it("/status shows model, tokens, context window, queue mode and session age", async () => {
    const out = await handleCommandMessage("/status", authorized, new MemorySession(), ctx());
    expect(out.action).toBe("reply");
    const text = out.action === "reply" ? out.replies[0]! : "";
    expect(text).toContain("Model: anthropic/claude-sonnet-4-6");
    expect(text).toContain("12.3k in / 678 out");
    expect(text).toContain("20k/200k (10%)");
    expect(text).toContain("Queue: steer");
    expect(text).toContain("age 2h 5m");
    expect(text).toContain("Compactions: 0");
  });

  it("/new starts a new session; /new <model> also picks the model; other text becomes the first message", async () => {
    const session = new MemorySession();
    expect(await handleCommandMessage("/new", authorized, session, ctx())).toEqual({
      action: "reply",
      replies: ["✅ New session started."],
    });
    expect(session.sessionId).toBe("s2");
    const withModel = await handleCommandMessage("/new opus", authorized, session, ctx());
    expect(withModel.action).toBe("reply");
    expect(session.settings.modelOverride).toBe("anthropic/claude-opus-4-6");
    const withText = await handleCommandMessage("/new plan my week", authorized, session, ctx());
    expect(withText).toMatchObject({ action: "run", text: "plan my week" });
  });

  it("/reset, /reset soft, /stop, /compact", async () => {
    const session = new MemorySession();
    await handleCommandMessage("/reset", authorized, session, ctx());
    expect(session.log).toContain("reset:hard");
    expect(
      await handleCommandMessage("/reset soft carry on", authorized, session, ctx()),
    ).toMatchObject({ action: "run", text: "carry on" });
    expect(session.log).toContain("reset:soft");
    expect(await handleCommandMessage("/stop", authorized, session, ctx())).toEqual({
      action: "reply",
      replies: ["Nothing is running."],
    });
    session.runActive = true;
    session.queued = 2;
    expect(await handleCommandMessage("/stop", authorized, session, ctx())).toEqual({
      action: "reply",
      replies: ["⏹️ Stopped the current run. Cancelled 2 queued messages."],
    });
    session.transcript = ["x", "y"];
    expect(
      await handleCommandMessage("/compact keep decisions", authorized, session, ctx()),
    ).toEqual({
      action: "reply",
      replies: ["🧹 Compacted the session context (900 → 100 tokens)."],
    });
    expect(session.log).toContain("compact:keep decisions");
  });

  it("/help, /commands, /whoami (/id)", async () => {
    const session = new MemorySession();
    const help = await handleCommandMessage("/help", authorized, session, ctx());
    expect(help.action === "reply" && help.replies[0]).toContain("/new [model]");
    const list = await handleCommandMessage("/commands", authorized, session, ctx());
    expect(list.action === "reply" && list.replies[0]).toContain("/queue <mode>");
    const who = await handleCommandMessage(
      "/id",
      authorized,
      session,
      ctx({ senderIsOwner: true }),
    );
    expect(who.action === "reply" && who.replies[0]).toMatch(
      /slack sender id: U1 \(Ada\)[\s\S]*Owner: yes/,
    );
  });

  it("an unauthorized command-only message is dropped silently and changes nothing", async () => {
    const session = new MemorySession();
    expect(await handleCommandMessage("/reset", unauthorized, session, ctx())).toEqual({
      action: "drop",
    });
    expect(await handleCommandMessage("/new", unauthorized, session, ctx())).toEqual({
      action: "drop",
    });
    expect(session.log).toEqual([]);
    expect(session.sessionId).toBe("s1");
  });
});

describe("directives", () => {
  it("a directive sent alone persists for the session and confirms", async () => {
    const session = new MemorySession();
    expect(await handleCommandMessage("/think high", authorized, session, ctx())).toEqual({
      action: "reply",
      replies: ["Thinking level set to high."],
    });
    expect(session.settings.thinkLevel).toBe("high");
    expect(await handleCommandMessage("/think off", authorized, session, ctx())).toEqual({
      action: "reply",
      replies: ["Thinking disabled."],
    });
    await handleCommandMessage("/think default", authorized, session, ctx());
    expect(session.settings.thinkLevel).toBeUndefined();
    await handleCommandMessage("/verbose full", authorized, session, ctx());
    expect(session.settings.verbose).toBe("full");
    const bad = await handleCommandMessage("/think sideways", authorized, session, ctx());
    expect(bad.action === "reply" && bad.replies[0]).toMatch(/Unknown thinking level/);
  });

  it("inside text a directive applies once and is stripped; /model persists even inline", async () => {
    const session = new MemorySession();
    const out = await handleCommandMessage(
      "/think high summarise the thread /model openai/gpt-5.4",
      authorized,
      session,
      ctx(),
    );
    expect(out).toMatchObject({
      action: "run",
      text: "summarise the thread",
      oneShot: { thinkLevel: "high" },
    });
    expect(session.settings.thinkLevel).toBeUndefined();
    expect(session.settings.modelOverride).toBe("openai/gpt-5.4");
  });

  it("an unauthorized directive reaches the model as plain text", async () => {
    const session = new MemorySession();
    expect(await handleCommandMessage("/think high", unauthorized, session, ctx())).toMatchObject({
      action: "run",
      text: "/think high",
      oneShot: {},
    });
    expect(
      await handleCommandMessage("/model openai/gpt-5.4 hi", unauthorized, session, ctx()),
    ).toMatchObject({ action: "run", text: "/model openai/gpt-5.4 hi" });
    expect(session.settings).toEqual({});
  });

  it("/help /commands /status /whoami also run inline and are removed from the text", async () => {
    const session = new MemorySession();
    const out = await handleCommandMessage("hi /status how are you", authorized, session, ctx());
    expect(out.action).toBe("run");
    if (out.action !== "run") return;
    expect(out.text).toBe("hi how are you");
    expect(out.replies[0]).toContain("edgeclaw status");
  });

  it("/model lists, picks by number, alias or provider/model, and resets", async () => {
    const session = new MemorySession();
    const list = await handleCommandMessage("/model", authorized, session, ctx());
    expect(list.action === "reply" && list.replies[0]).toMatch(
      /1\. anthropic\/claude-sonnet-4-6 ✓/,
    );
    await handleCommandMessage("/model 2", authorized, session, ctx());
    expect(session.settings.modelOverride).toBe("openai/gpt-5.4");
    await handleCommandMessage("/model opus -s", authorized, session, ctx());
    expect(session.settings.modelOverride).toBe("anthropic/claude-opus-4-6");
    await handleCommandMessage("/model default", authorized, session, ctx());
    expect(session.settings.modelOverride).toBeUndefined();
    const unknown = await handleCommandMessage("/model nonsense", authorized, session, ctx());
    expect(unknown.action === "reply" && unknown.replies[0]).toMatch(/unknown model/);
  });

  it("/queue <mode> with debounce, cap and drop; /queue default clears", async () => {
    const session = new MemorySession();
    const out = await handleCommandMessage(
      "/queue collect debounce:2s cap:5 drop:old",
      authorized,
      session,
      ctx(),
    );
    expect(out).toEqual({
      action: "reply",
      replies: ["Queue set: mode collect · debounce 2s · cap 5 · drop old."],
    });
    expect(session.settings.queue).toEqual({
      mode: "collect",
      debounceMs: 2000,
      cap: 5,
      drop: "old",
    });
    await handleCommandMessage("/queue debounce:1m", authorized, session, ctx());
    expect(session.settings.queue).toMatchObject({ mode: "collect", debounceMs: 60_000 });
    await handleCommandMessage("/queue default", authorized, session, ctx());
    expect(session.settings.queue).toBeUndefined();
    const bad = await handleCommandMessage("/queue sometimes", authorized, session, ctx());
    expect(bad.action === "reply" && bad.replies[0]).toMatch(/Unknown queue option/);
    expect(
      await handleCommandMessage("/queue interrupt now please", authorized, session, ctx()),
    ).toMatchObject({
      action: "run",
      text: "now please",
      oneShot: { queue: { mode: "interrupt" } },
    });
  });
});
