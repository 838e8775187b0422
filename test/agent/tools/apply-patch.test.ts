import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { createToolset, runTool } from "../../../functions/agent/tools/index.ts";
import { listFiles, readFile, writeFile } from "../../../functions/agent/workspace.ts";
import { toolContext } from "./context.ts";

const tools = createToolset(parseConfig({}), "main");
const patch = (input: string, ctx: ReturnType<typeof toolContext>) =>
  runTool(tools, { name: "apply_patch", arguments: { input } }, ctx);
const content = async (agentId: string, path: string) =>
  (await readFile(env, agentId, path))?.content ?? null;

describe("apply_patch", () => {
  it("adds, updates (two hunks), deletes and moves files in one patch", async () => {
    const ctx = toolContext();
    await writeFile(
      env,
      ctx.agentId,
      "src/app.ts",
      "const a = 1;\nconst b = 2;\n\nfunction f() {\n  return a;\n}\n",
    );
    await writeFile(env, ctx.agentId, "old.txt", "obsolete\n");
    await writeFile(env, ctx.agentId, "notes/draft.md", "# Draft\nline\n");
    const result = await patch(
      [
        "*** Begin Patch",
        "*** Add File: docs/new.md",
        "+first",
        "+second",
        "*** Update File: src/app.ts",
        "@@",
        "-const a = 1;",
        "+const a = 10;",
        "@@ function f() {",
        "-  return a;",
        "+  return a + b;",
        "*** Delete File: old.txt",
        "*** Update File: notes/draft.md",
        "*** Move to: notes/final.md",
        "@@",
        " # Draft",
        "-line",
        "+final line",
        "*** End of File",
        "*** End Patch",
      ].join("\n"),
      ctx,
    );
    expect(result.isError).toBeUndefined();
    expect(result.content).toContain("A docs/new.md");
    expect(result.content).toContain("M src/app.ts");
    expect(result.content).toContain("D old.txt");
    expect(await content(ctx.agentId, "docs/new.md")).toBe("first\nsecond\n");
    expect(await content(ctx.agentId, "src/app.ts")).toBe(
      "const a = 10;\nconst b = 2;\n\nfunction f() {\n  return a + b;\n}\n",
    );
    expect(await content(ctx.agentId, "old.txt")).toBeNull();
    expect(await content(ctx.agentId, "notes/draft.md")).toBeNull();
    expect(await content(ctx.agentId, "notes/final.md")).toBe("# Draft\nfinal line\n");
  });

  it("a patch whose later hunk does not apply changes nothing, and says which hunk failed", async () => {
    const ctx = toolContext();
    await writeFile(env, ctx.agentId, "a.txt", "alpha\n");
    await writeFile(env, ctx.agentId, "b.txt", "beta\n");
    const before = await listFiles(env, ctx.agentId);
    const result = await patch(
      [
        "*** Begin Patch",
        "*** Update File: a.txt",
        "@@",
        "-alpha",
        "+ALPHA",
        "*** Add File: c.txt",
        "+gamma",
        "*** Delete File: b.txt",
        "*** Update File: b.txt",
        "@@",
        "-beta",
        "+BETA",
        "*** End Patch",
      ].join("\n"),
      ctx,
    );
    expect(result.isError).toBe(true);
    expect(result.content).toContain("Update File b.txt: the file does not exist");
    expect(result.content).toContain("nothing was changed");
    expect(await content(ctx.agentId, "a.txt")).toBe("alpha\n");
    expect(await content(ctx.agentId, "b.txt")).toBe("beta\n");
    expect(await content(ctx.agentId, "c.txt")).toBeNull();
    expect(await listFiles(env, ctx.agentId)).toEqual(before);
  });

  it("refuses malformed patches, unmatched context, an Add over an existing file and paths outside the workspace", async () => {
    const ctx = toolContext();
    await writeFile(env, ctx.agentId, "a.txt", "alpha\n");
    const cases: Array<[string, RegExp]> = [
      [
        "*** Update File: a.txt\n@@\n-alpha\n+x\n*** End Patch",
        /must start with "\*\*\* Begin Patch"/,
      ],
      ["*** Begin Patch\n*** Update File: a.txt\n@@\nalpha\n*** End Patch", /hunk line must start/],
      [
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-omega\n+x\n*** End Patch",
        /lines were not found/,
      ],
      ["*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch", /already exists/],
      ["*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch", /\.\./],
    ];
    for (const [input, message] of cases) {
      const result = await patch(input, ctx);
      expect(result.isError, input).toBe(true);
      expect(result.content, input).toMatch(message);
    }
    expect(await content(ctx.agentId, "a.txt")).toBe("alpha\n");
    expect((await listFiles(env, ctx.agentId)).map((entry) => entry.path)).toEqual(["a.txt"]);
  });

  it("keeps private memory out of a group run, and tools.exec.applyPatch switches it off or limits it to models", async () => {
    const group = toolContext({ mainPrivateSession: false });
    const result = await patch(
      "*** Begin Patch\n*** Add File: MEMORY.md\n+secret\n*** End Patch",
      group,
    );
    expect(result.isError).toBe(true);
    expect(await content(group.agentId, "MEMORY.md")).toBeNull();

    const names = (config: Record<string, unknown>, modelRef?: string) =>
      createToolset(parseConfig(config), "main", { modelRef }).map((tool) => tool.name);
    expect(names({})).toContain("apply_patch");
    expect(names({ tools: { exec: { applyPatch: { enabled: false } } } })).not.toContain(
      "apply_patch",
    );
    const limited = { tools: { exec: { applyPatch: { allowModels: ["gpt-5.4"] } } } };
    expect(names(limited, "openai/gpt-5.4")).toContain("apply_patch");
    expect(names(limited, "anthropic/claude-x")).not.toContain("apply_patch");
    // deny: ["write"] does not deny apply_patch (the docs' rule); deny group:fs does.
    expect(names({ tools: { deny: ["write"] } })).toContain("apply_patch");
    expect(names({ tools: { deny: ["group:fs"] } })).not.toContain("apply_patch");
  });
});
