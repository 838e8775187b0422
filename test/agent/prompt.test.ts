import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import {
  SILENT_REPLY_TOKEN,
  buildSystemPrompt,
  isSilentReply,
  renderSystemPrompt,
} from "../../functions/agent/prompt.ts";
import type { PromptRuntime } from "../../functions/agent/prompt-input.ts";
import { truncateMiddle } from "../../functions/agent/prompt-project-context.ts";
import { loadSystemPrompt } from "../../functions/agent/prompt-load.ts";
import { isMainPrivateSession } from "../../functions/agent/private-session.ts";
import { writeFile } from "../../functions/agent/workspace.ts";
import { ensureWorkspaceSeeded } from "../../functions/agent/workspace-seeding.ts";

const now = new Date("2026-03-01T23:30:00Z");
const tools = [
  { name: "read", description: "Read a file from the workspace. Long files are paged." },
  { name: "session_status", description: "Show the session's status card." },
];
const baseRuntime: PromptRuntime = {
  now,
  tools,
  channel: "slack",
  chatType: "direct",
  modelRef: "anthropic/claude-sonnet-4-5",
  mainPrivateSession: true,
};
const fullFiles = {
  "AGENTS.md": "# Agents\nrule one",
  "SOUL.md": "# Soul\nwarm and brief",
  "IDENTITY.md": "# Identity\nname: Molty",
  "USER.md": "# User\nprefers metric",
  "MEMORY.md": "# Memory\nlikes tea",
};

function render(overrides: Partial<Parameters<typeof renderSystemPrompt>[0]> = {}) {
  return renderSystemPrompt({
    config: parseConfig({}),
    agent: { id: "main" },
    files: fullFiles,
    runtime: baseRuntime,
    ...overrides,
  });
}

describe("silent replies", () => {
  it("recognises only the whole reply being the token, in any case", () => {
    expect(SILENT_REPLY_TOKEN).toBe("NO_REPLY");
    expect(isSilentReply("NO_REPLY")).toBe(true);
    expect(isSilentReply("  no_reply\n")).toBe(true);
    expect(isSilentReply("NO_REPLY because nothing to add")).toBe(false);
    expect(isSilentReply("Sure. NO_REPLY")).toBe(false);
    expect(isSilentReply("")).toBe(false);
    expect(isSilentReply(undefined)).toBe(false);
  });

  it("teaches NO_REPLY in groups and channels, never in direct chats", () => {
    expect(render().text).not.toContain("NO_REPLY");
    expect(render({ runtime: { ...baseRuntime, chatType: "group" } }).text).toMatch(
      /reply with exactly NO_REPLY and nothing else/,
    );
    expect(render({ runtime: { ...baseRuntime, chatType: "channel" } }).text).toContain("NO_REPLY");
  });
});

describe("system prompt", () => {
  it("has OpenClaw's sections, stable ones before the per-turn ones", () => {
    const prompt = render();
    const order = [
      "You are",
      "## Tooling",
      "## Execution",
      "## Safety",
      "## Workspace",
      "## Docs",
      "# Project Context",
      "## Messaging",
      "## Current date",
      "## Runtime",
    ];
    const positions = order.map((heading) => prompt.text.indexOf(heading));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(prompt.stable).toContain("# Project Context");
    expect(prompt.dynamic).not.toContain("# Project Context");
    expect(prompt.dynamic).toContain("## Runtime");
    expect(prompt.text).toContain("- read: Read a file from the workspace.");
    expect(prompt.text).toContain(
      "Runtime: agent=main | host=cloudflare-workers | model=anthropic/claude-sonnet-4-5 | channel=slack | chat=direct",
    );
    expect(prompt.text).toContain("You are talking on slack, in a direct (one-to-one) chat.");
  });

  it("injects the bootstrap files in OpenClaw's order", () => {
    const text = render().text;
    const heads = [
      "## AGENTS.md",
      "## SOUL.md",
      "## IDENTITY.md",
      "## USER.md",
      "## MEMORY.md",
    ].map((h) => text.indexOf(h));
    expect(heads.every((h) => h >= 0)).toBe(true);
    expect([...heads].sort((a, b) => a - b)).toEqual(heads);
    expect(text).toContain("rule one");
    expect(text).toContain("likes tea");
    expect(text).toMatch(/SOUL\.md defines your persona/);
  });

  it("marks missing required files, omits missing optional ones, skips empty ones", () => {
    const prompt = render({ files: { "AGENTS.md": "rules", "SOUL.md": "   \n" } });
    expect(prompt.text).toContain("[missing: IDENTITY.md is not in the workspace yet]");
    expect(prompt.text).not.toContain("## SOUL.md");
    expect(prompt.text).not.toContain("## USER.md");
    expect(prompt.text).not.toContain("## MEMORY.md");
    expect(prompt.text).not.toContain("MEMORY.md is not");
    expect(prompt.files).toEqual([
      { path: "AGENTS.md", status: "injected", rawChars: 5, injectedChars: 5 },
      { path: "SOUL.md", status: "empty", rawChars: 4, injectedChars: 0 },
      { path: "IDENTITY.md", status: "missing", rawChars: 0, injectedChars: 0 },
    ]);
  });

  it("injects MEMORY.md only in the main private session, and only when told so", () => {
    expect(
      render({ runtime: { ...baseRuntime, chatType: "direct", mainPrivateSession: true } }).text,
    ).toContain("likes tea");
    expect(
      render({ runtime: { ...baseRuntime, chatType: "group", mainPrivateSession: false } }).text,
    ).not.toContain("likes tea");
    expect(
      render({ runtime: { ...baseRuntime, chatType: "direct", mainPrivateSession: false } }).text,
    ).not.toContain("likes tea");
    // Not known to be private: a direct chat or a run of unknown type by default gets no memory.
    expect(
      render({ runtime: { ...baseRuntime, chatType: "direct", mainPrivateSession: undefined } })
        .text,
    ).not.toContain("likes tea");
    expect(
      render({
        runtime: {
          ...baseRuntime,
          chatType: undefined,
          channel: undefined,
          mainPrivateSession: undefined,
        },
      }).text,
    ).not.toContain("likes tea");
  });

  it("the main private session is the owner in a direct chat, nothing else", () => {
    expect(isMainPrivateSession({ chatType: "direct", senderIsOwner: true })).toBe(true);
    expect(isMainPrivateSession({ chatType: "direct", senderIsOwner: false })).toBe(false);
    expect(isMainPrivateSession({ chatType: "group", senderIsOwner: true })).toBe(false);
    expect(isMainPrivateSession({ chatType: "channel", senderIsOwner: true })).toBe(false);
    expect(isMainPrivateSession({ chatType: undefined, senderIsOwner: true })).toBe(false);
  });

  it("adds the first-run ritual only while BOOTSTRAP.md has content", () => {
    const pending = render({
      files: { ...fullFiles, "BOOTSTRAP.md": "Ask the user who you are." },
    });
    expect(pending.text).toContain("## BOOTSTRAP.md");
    expect(pending.text).toMatch(/BOOTSTRAP\.md is pending/);
    const done = render({ files: { ...fullFiles, "BOOTSTRAP.md": "" } });
    expect(done.text).not.toContain("## BOOTSTRAP.md");
    expect(done.text).not.toMatch(/BOOTSTRAP\.md is pending/);
  });

  it("truncates a file over bootstrapMaxChars with a marker and one notice", () => {
    const config = parseConfig({ agents: { defaults: { bootstrapMaxChars: 1000 } } });
    const big = `HEAD-START ${"a".repeat(3000)} TAIL-END`;
    const prompt = render({ config, files: { ...fullFiles, "AGENTS.md": big } });
    expect(prompt.text).toContain("HEAD-START");
    expect(prompt.text).toContain("TAIL-END");
    expect(prompt.text).toContain("[… AGENTS.md truncated: 3020 chars");
    expect(prompt.text).toMatch(/Some workspace files above were truncated/);
    const report = prompt.files.find((file) => file.path === "AGENTS.md");
    expect(report).toMatchObject({ status: "truncated", rawChars: 3020, limitedBy: "max/file" });
    expect(report?.injectedChars).toBeLessThanOrEqual(1000);
    expect(render().text).not.toMatch(/were truncated/);
  });

  it("stops at bootstrapTotalMaxChars across files", () => {
    const config = parseConfig({
      agents: { defaults: { bootstrapMaxChars: 5000, bootstrapTotalMaxChars: 6000 } },
    });
    const files = {
      "AGENTS.md": "A".repeat(4000),
      "SOUL.md": "S".repeat(4000),
      "IDENTITY.md": "I".repeat(4000),
    };
    const prompt = render({ config, files });
    const byPath = Object.fromEntries(prompt.files.map((file) => [file.path, file]));
    expect(byPath["AGENTS.md"]).toMatchObject({ status: "injected", injectedChars: 4000 });
    expect(byPath["SOUL.md"]).toMatchObject({ status: "truncated", limitedBy: "max/total" });
    expect(byPath["IDENTITY.md"]).toMatchObject({ status: "omitted", limitedBy: "max/total" });
    const injected = prompt.files.reduce((sum, file) => sum + file.injectedChars, 0);
    expect(injected).toBeLessThanOrEqual(6000);
  });

  it("gives USER.md its own 4,000-char budget", () => {
    const prompt = render({ files: { ...fullFiles, "USER.md": "u".repeat(9000) } });
    const user = prompt.files.find((file) => file.path === "USER.md");
    expect(user).toMatchObject({ status: "truncated", rawChars: 9000 });
    expect(user?.injectedChars).toBeLessThanOrEqual(4000);
  });

  it("uses the default limits from the docs (20000 per file, 60000 total)", () => {
    const config = parseConfig({});
    expect(config.agents.defaults.bootstrapMaxChars).toBe(20_000);
    expect(config.agents.defaults.bootstrapTotalMaxChars).toBe(60_000);
  });

  it("gives sub-agents (minimal) only AGENTS.md and no silent-reply rule", () => {
    const prompt = render({
      runtime: {
        ...baseRuntime,
        chatType: "group",
        promptMode: "minimal",
        extraContext: "task: summarise",
      },
    });
    expect(prompt.text).toContain("## AGENTS.md");
    expect(prompt.text).not.toContain("## SOUL.md");
    expect(prompt.text).not.toContain("NO_REPLY");
    expect(prompt.text).toContain("## Subagent Context\ntask: summarise");
    expect(render({ runtime: { ...baseRuntime, promptMode: "none" } }).text).toMatch(
      /^You are a personal assistant[^\n]*$/,
    );
  });

  it("honours contextInjection never / continuation-skip", () => {
    const never = render({
      config: parseConfig({ agents: { defaults: { contextInjection: "never" } } }),
    });
    expect(never.text).not.toContain("# Project Context");
    const skip = parseConfig({ agents: { defaults: { contextInjection: "continuation-skip" } } });
    expect(
      render({ config: skip, runtime: { ...baseRuntime, continuation: true } }).text,
    ).not.toContain("# Project Context");
    expect(render({ config: skip }).text).toContain("# Project Context");
  });

  it("states the date in agents.defaults.userTimezone (UTC by default); an unknown zone is a config error", () => {
    const tokyo = render({
      config: parseConfig({ agents: { defaults: { userTimezone: "Asia/Tokyo" } } }),
    });
    expect(tokyo.text).toContain("Today is Monday, March 2, 2026 (time zone: Asia/Tokyo).");
    expect(render().text).toContain("Today is Sunday, March 1, 2026 (time zone: UTC).");
    // A zone that is not a real IANA zone never reaches the prompt: the config refuses it.
    expect(() => parseConfig({ agents: { defaults: { userTimezone: "Mars/Olympus" } } })).toThrow(
      /userTimezone: expected an IANA time zone/,
    );
    expect(tokyo.text).toContain("call `session_status`");
  });

  it("uses the agent's configured name", () => {
    const config = parseConfig({ agents: { list: [{ id: "ops", name: "Opsy" }] } });
    expect(
      buildSystemPrompt({ config, agent: { id: "ops" }, files: {}, runtime: baseRuntime }),
    ).toMatch(/^You are Opsy,/);
  });

  it("truncateMiddle never exceeds its limit", () => {
    for (const limit of [10, 150, 500, 5000]) {
      expect(truncateMiddle("x".repeat(10_000), limit, "A.md").length).toBeLessThanOrEqual(limit);
    }
  });
});

describe("loadSystemPrompt", () => {
  it("reads the bootstrap files from the workspace store", async () => {
    const agentId = `prompt-${crypto.randomUUID().slice(0, 8)}`;
    await ensureWorkspaceSeeded(env, agentId, {
      "AGENTS.md": "seeded rules",
      "SOUL.md": "seeded soul",
    });
    await writeFile(env, agentId, "IDENTITY.md", "I am Loaded");
    await writeFile(env, agentId, "notes/other.md", "not injected");
    const prompt = await loadSystemPrompt(env, parseConfig({}), { id: agentId }, baseRuntime);
    expect(prompt.text).toContain("seeded rules");
    expect(prompt.text).toContain("I am Loaded");
    expect(prompt.text).not.toContain("not injected");
    expect(prompt.files.map((file) => file.path)).toEqual(["AGENTS.md", "SOUL.md", "IDENTITY.md"]);
  });
});
