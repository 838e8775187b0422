import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RoutedEvent } from "../../durable-objects/session-api.ts";
import { readFile } from "../../functions/agent/workspace.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { handleCommandMessage } from "../../functions/commands/execute.ts";
import { collectRunEvents, sessionStub, webchatEvent } from "../durable-objects/helpers.ts";
import { MemorySession } from "./memory-session.ts";

/**
 * `/export-session` (alias `/export`, tools/slash-commands): the owner writes the current session's
 * transcript into the agent's workspace as Markdown, JSON or HTML. The web chat is the owner's
 * private chat, so its exports stay under memory/, which no group's run can read.
 */
async function ask(key: string, agentId: string, text: string): Promise<string> {
  const event: RoutedEvent = { ...webchatEvent(key, text), agentId };
  const events = await collectRunEvents(await sessionStub(key).chat(event));
  const done = events.find((e) => e.type === "done");
  return done?.type === "done" ? done.text : JSON.stringify(events);
}

describe("/export-session", () => {
  it("writes the owner's private chat under memory/ as Markdown, JSON or HTML, and refuses a path outside it", async () => {
    const agentId = `exp${crypto.randomUUID().slice(0, 6)}`;
    const key = `agent:${agentId}:webchat:exp-${crypto.randomUUID().slice(0, 8)}`;
    expect(await ask(key, agentId, "/export")).toBe(
      "Nothing to export: this session has no messages yet.",
    );
    await ask(key, agentId, "remember the ``` fence <b>bold</b>");

    const reply = await ask(key, agentId, "/export");
    const path = /to (memory\/exports\/session-\d{8}-\d{4}-[\w-]+\.md) \(/.exec(reply)?.[1];
    expect(path, reply).toBeDefined();
    expect(reply).toContain("Exported 2 messages");
    const markdown = (await readFile(env, agentId, path!))!.content;
    expect(markdown).toMatch(new RegExp(`^# Session ${key}\\n`));
    expect(markdown).toContain("## User · ");
    expect(markdown).toContain("remember the ``` fence <b>bold</b>");
    expect(markdown).toContain("## Assistant · ");
    // A second export without a path gets a new name, never overwriting the first.
    const again = /to (\S+) \(/.exec(await ask(key, agentId, "/export"))?.[1];
    expect(again).not.toBe(path);

    expect(await ask(key, agentId, "/export-session memory/exports/s.json")).toContain(
      "KiB, json).",
    );
    const json = JSON.parse((await readFile(env, agentId, "memory/exports/s.json"))!.content);
    expect(json.sessionKey).toBe(key);
    expect(json.messages.slice(0, 2).map((m: { role: string }) => m.role)).toEqual([
      "user",
      "assistant",
    ]);

    expect(await ask(key, agentId, "/export memory/exports/s.html")).toContain("KiB, html).");
    const html = (await readFile(env, agentId, "memory/exports/s.html"))!.content;
    expect(html).toContain("&#60;b&#62;bold&#60;/b&#62;");
    expect(html).not.toContain("<b>bold</b>");

    expect(await ask(key, agentId, "/export exports/out.md")).toMatch(
      /^Not exported: this is the owner's private chat, which may hold private memory; export it under memory\//,
    );
    expect(await readFile(env, agentId, "exports/out.md")).toBeNull();
    expect(await ask(key, agentId, "/export memory/x.txt")).toBe(
      "Not exported: memory/x.txt should end in .md, .json or .html.",
    );
    expect(await ask(key, agentId, "/export ../../etc/passwd.md")).toMatch(/^Not exported: /);
  });

  it("is refused to anyone but the owner, and nothing reaches the session", async () => {
    const session = new MemorySession();
    const out = await handleCommandMessage(
      "/export notes.md",
      { commandAuthorized: true },
      session,
      {
        config: parseConfig({}),
        agentId: "main",
        sessionKey: "agent:main:slack:group:c1",
        sender: { channel: "slack", accountId: "default", senderId: "U9", chatType: "group" },
        senderIsOwner: false,
        now: Date.now(),
      },
    );
    expect(out).toEqual({
      action: "reply",
      replies: [
        "Only the owner can export a session (commands.ownerAllowFrom); nothing was written.",
      ],
    });
    expect(session.log.filter((entry) => entry.startsWith("export:"))).toEqual([]);
  });
});
