import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import { readFile, writeFile } from "../../../functions/agent/workspace.ts";
import { toolContext } from "./context.ts";

const tools = createToolset(parseConfig({}), "main");
const call = (name: string, args: Record<string, unknown>, ctx = toolContext()) =>
  runTool(tools, { name, arguments: args }, ctx);

describe("read / write / edit tools", () => {
  it("write creates and overwrites; read returns the content", async () => {
    const ctx = toolContext();
    expect(await call("write", { path: "notes/today.md", content: "hello" }, ctx)).toEqual({
      content: "Created notes/today.md (5 bytes, version 1).",
    });
    expect(await call("write", { path: "notes/today.md", content: "hello again" }, ctx)).toEqual({
      content: "Wrote notes/today.md (11 bytes, version 2).",
    });
    expect(await call("read", { path: "notes/today.md" }, ctx)).toEqual({ content: "hello again" });
    expect((await readFile(env, ctx.agentId, "notes/today.md"))?.content).toBe("hello again");
  });

  it("read pages long files and lists folders", async () => {
    const ctx = toolContext();
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join("\n");
    await writeFile(env, ctx.agentId, "long.md", lines);
    await writeFile(env, ctx.agentId, "memory/a.md", "a");
    const first = await call("read", { path: "long.md" }, ctx);
    expect(first.content).toMatch(/^line 1\n/);
    expect(first.content).toContain(
      "[long.md: showing lines 1-2000 of 2500. Call read with offset=2001 to continue.]",
    );
    const second = await call("read", { path: "long.md", offset: 2001, limit: 2 }, ctx);
    expect(second.content).toBe(
      "line 2001\nline 2002\n\n[long.md: showing lines 2001-2002 of 2500. Call read with offset=2003 to continue.]",
    );
    expect((await call("read", { path: "." }, ctx)).content).toBe(
      `Workspace files:\nlong.md (${lines.length} bytes)\nmemory/a.md (1 bytes)`,
    );
    expect((await call("read", { path: "memory" }, ctx)).content).toBe(
      "Files under memory/:\nmemory/a.md (1 bytes)",
    );
  });

  it("read bounds one huge line", async () => {
    const ctx = toolContext();
    await writeFile(env, ctx.agentId, "wide.md", "w".repeat(120_000));
    const result = await call("read", { path: "wide.md" }, ctx);
    expect(result.content.length).toBeLessThan(51_000);
    expect(result.content).toContain("[wide.md: showing lines 1-1 of 1.]");
  });

  it("edit replaces one exact match and accepts old_string/new_string", async () => {
    const ctx = toolContext();
    await writeFile(env, ctx.agentId, "SOUL.md", "tone: formal\nemoji: none\n");
    expect(
      await call("edit", { path: "SOUL.md", oldText: "formal", newText: "playful" }, ctx),
    ).toEqual({
      content: "Edited SOUL.md (version 2, 26 bytes).",
    });
    await call("edit", { path: "SOUL.md", old_string: "none", new_string: "🦦" }, ctx);
    expect((await readFile(env, ctx.agentId, "SOUL.md"))?.content).toBe(
      "tone: playful\nemoji: 🦦\n",
    );
  });

  it("explains errors without changing anything", async () => {
    const ctx = toolContext();
    await writeFile(env, ctx.agentId, "a.md", "x x");
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["read", { path: "missing.md" }, /File not found: missing.md/],
      ["read", { path: "../etc/passwd" }, /contains "\.\."/],
      ["read", {}, /read: invalid arguments — path:/],
      ["write", { path: "/abs.md", content: "x" }, /is absolute/],
      ["write", { path: "big.md", content: "b".repeat(1024 * 1024 + 1) }, /at most 1048576 bytes/],
      ["edit", { path: "a.md", oldText: "x", newText: "y" }, /occurs 2 times/],
      ["edit", { path: "a.md", oldText: "zzz", newText: "y" }, /was not found in a.md/],
      ["edit", { path: "nope.md", oldText: "x", newText: "y" }, /nope.md does not exist/],
      ["edit", { path: "a.md", newText: "y" }, /oldText and newText are required/],
    ];
    for (const [name, args, message] of cases) {
      const result = await call(name, args, ctx);
      expect(result.isError, `${name} ${JSON.stringify(args).slice(0, 60)}`).toBe(true);
      expect(result.content).toMatch(message);
    }
    expect(await readFile(env, ctx.agentId, "a.md")).toMatchObject({ content: "x x", version: 1 });
    expect(await readFile(env, ctx.agentId, "big.md")).toBeNull();
  });
});

describe("session_status tool", () => {
  it("returns the session snapshot with the current time in the user's zone", async () => {
    const config = parseConfig({ agents: { defaults: { userTimezone: "Europe/Berlin" } } });
    const ctx = toolContext({ config });
    const result = await runTool(
      createToolset(config, "main"),
      { name: "session_status", arguments: {} },
      ctx,
    );
    const card = JSON.parse(result.content) as Record<string, unknown> & {
      time: { now: string; timeZone: string; local: string };
    };
    expect(card).toMatchObject({
      sessionKey: "agent:main:main",
      model: "fakeanthropic/claude-test",
      inputTokens: 12,
    });
    expect(card.time.timeZone).toBe("Europe/Berlin");
    expect(Math.abs(Date.parse(card.time.now) - Date.now())).toBeLessThan(60_000);
    expect(card.time.local).toMatch(/GMT\+[12]|CES?T/);
  });
});
