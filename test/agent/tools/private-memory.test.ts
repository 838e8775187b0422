import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import { PRIVATE_MEMORY_REFUSAL } from "../../../functions/agent/tools/private-memory.ts";
import { readFile, writeFile } from "../../../functions/agent/workspace.ts";
import type { ToolContext } from "../../../functions/agent/types.ts";
import { toolContext } from "./context.ts";

/**
 * The file tools are offered in every session, so they enforce the same rule as the system prompt:
 * MEMORY.md and memory/ only in the owner's private chat. Elsewhere (a group, a stranger's DM) every
 * spelling of those paths is refused and no private text comes back.
 */
const tools = createToolset(parseConfig({}), "main");
const call = (name: string, args: Record<string, unknown>, ctx: ToolContext) =>
  runTool(tools, { name, arguments: args }, ctx);

async function seededWorkspace(): Promise<{ agentId: string; secret: string }> {
  const agentId = `tools-mem-${crypto.randomUUID().slice(0, 8)}`;
  const secret = `private-${crypto.randomUUID().slice(0, 8)}`;
  await writeFile(env, agentId, "MEMORY.md", `# Memory\n${secret}`);
  await writeFile(env, agentId, "memory/2026-11-30.md", `daily ${secret}`);
  await writeFile(env, agentId, "notes/public.md", "public note");
  return { agentId, secret };
}

const PRIVATE_SPELLINGS = [
  "MEMORY.md",
  "memory.md",
  "./MEMORY.md",
  "Memory.MD",
  " MEMORY.md ",
  "MEMORY.md/",
  "notes/../MEMORY.md",
  "memory/../MEMORY.md",
  "memory/2026-11-30.md",
  "./memory//2026-11-30.md",
  "Memory/2026-11-30.md",
  "MEMORY/x.md",
  "memory\\2026-11-30.md",
  "memory",
  "memory/",
];

describe("private memory in the file tools", () => {
  it("the owner's private chat reads, writes and edits MEMORY.md and memory/", async () => {
    const { agentId, secret } = await seededWorkspace();
    const ctx = toolContext({ agentId, mainPrivateSession: true });
    expect((await call("read", { path: "./MEMORY.md" }, ctx)).content).toContain(secret);
    expect((await call("read", { path: "memory/2026-11-30.md" }, ctx)).content).toContain(secret);
    expect((await call("read", { path: "." }, ctx)).content).toContain("MEMORY.md");
    expect(await call("write", { path: "memory/new.md", content: "x" }, ctx)).not.toHaveProperty(
      "isError",
    );
    expect(
      await call("edit", { path: "MEMORY.md", oldText: secret, newText: "edited" }, ctx),
    ).not.toHaveProperty("isError");
    expect((await readFile(env, agentId, "MEMORY.md"))?.content).toBe("# Memory\nedited");
  });

  for (const path of PRIVATE_SPELLINGS) {
    it(`read "${path}" outside the private chat is refused without the content`, async () => {
      const { agentId, secret } = await seededWorkspace();
      const result = await call(
        "read",
        { path },
        toolContext({
          agentId,
          mainPrivateSession: false,
          senderIsOwner: false,
          sessionKey: "agent:main:slack:group:g1",
        }),
      );
      expect(result.isError).toBe(true);
      expect(result.content).not.toContain(secret);
      expect(result.content).not.toContain("bytes)"); // no listing of memory/ either
      // `..` is refused by the workspace itself before the memory rule; every other spelling gets the memory refusal.
      expect(result.content).toContain(
        path.includes("..") ? 'contains ".."' : PRIVATE_MEMORY_REFUSAL,
      );
    });
  }

  it("write and edit outside the private chat cannot touch private memory", async () => {
    const { agentId, secret } = await seededWorkspace();
    const ctx = toolContext({ agentId, mainPrivateSession: false });
    for (const path of ["MEMORY.md", "./memory.md", "Memory/2026-11-30.md", "memory/evil.md"]) {
      const written = await call("write", { path, content: "overwritten by a group" }, ctx);
      expect(written).toEqual({
        content: expect.stringContaining(PRIVATE_MEMORY_REFUSAL),
        isError: true,
      });
      const edited = await call("edit", { path, oldText: secret, newText: "x" }, ctx);
      expect(edited).toEqual({
        content: expect.stringContaining(PRIVATE_MEMORY_REFUSAL),
        isError: true,
      });
    }
    expect((await readFile(env, agentId, "MEMORY.md"))?.content).toBe(`# Memory\n${secret}`);
    expect((await readFile(env, agentId, "memory/2026-11-30.md"))?.content).toBe(`daily ${secret}`);
    expect(await readFile(env, agentId, "memory/evil.md")).toBeNull();
  });

  it("outside the private chat other files still work and listings hide private memory", async () => {
    const { agentId } = await seededWorkspace();
    const ctx = toolContext({ agentId, mainPrivateSession: false });
    expect(await call("read", { path: "notes/public.md" }, ctx)).toEqual({
      content: "public note",
    });
    expect(
      await call("write", { path: "notes/memory.md", content: "not private" }, ctx),
    ).not.toHaveProperty("isError");
    expect((await call("read", { path: "." }, ctx)).content).toBe(
      "Workspace files:\nnotes/memory.md (11 bytes)\nnotes/public.md (11 bytes)",
    );
  });
});
