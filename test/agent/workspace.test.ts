import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  MAX_WORKSPACE_FILE_BYTES,
  WorkspaceError,
  deleteFile,
  editFile,
  listFiles,
  normalizeWorkspacePath,
  readFile,
  readFiles,
  writeFile,
} from "../../functions/agent/workspace.ts";
import { ensureWorkspaceSeeded } from "../../functions/agent/workspace-seeding.ts";

function agentId(): string {
  return `ws-${crypto.randomUUID().slice(0, 8)}`;
}

async function expectWorkspaceError(
  promise: Promise<unknown>,
  code: string,
): Promise<WorkspaceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  expect((error as WorkspaceError).code).toBe(code);
  return error as WorkspaceError;
}

describe("workspace paths", () => {
  it("normalises separators and dot segments to one relative form", () => {
    expect(normalizeWorkspacePath("./memory//2026-01-01.md")).toBe("memory/2026-01-01.md");
    expect(normalizeWorkspacePath("memory\\notes.md")).toBe("memory/notes.md");
    expect(normalizeWorkspacePath("  AGENTS.md ")).toBe("AGENTS.md");
  });

  it.each([
    ["", /empty/],
    ["../secrets", /\.\./],
    ["memory/../../x", /\.\./],
    ["/etc/passwd", /absolute/],
    ["C:/x.md", /absolute/],
    ["~/x.md", /absolute/],
    ["memory/", /directory/],
    ["a\u0000b", /control/],
    [".", /does not name a file/],
    ["x".repeat(600), /longer than/],
  ])("refuses %j", (input, message) => {
    expect(() => normalizeWorkspacePath(input)).toThrow(message);
  });
});

describe("workspace store", () => {
  it("creates, reads, overwrites and lists files with increasing versions", async () => {
    const agent = agentId();
    expect(await readFile(env, agent, "notes.md")).toBeNull();

    const first = await writeFile(env, agent, "notes.md", "one");
    expect(first).toMatchObject({ path: "notes.md", version: 1, created: true, bytes: 3 });
    const second = await writeFile(env, agent, "./notes.md", "two é");
    expect(second).toMatchObject({ version: 2, created: false, bytes: 6 });

    const file = await readFile(env, agent, "notes.md");
    expect(file).toMatchObject({ path: "notes.md", content: "two é", version: 2 });

    await writeFile(env, agent, "memory/2026-01-02.md", "b");
    await writeFile(env, agent, "memory/2026-01-01.md", "a");
    await writeFile(env, agent, "memoryless.md", "c");
    const all = await listFiles(env, agent);
    expect(all.map((entry) => entry.path)).toEqual([
      "memory/2026-01-01.md",
      "memory/2026-01-02.md",
      "memoryless.md",
      "notes.md",
    ]);
    expect(all.find((entry) => entry.path === "notes.md")?.bytes).toBe(6);
    const memory = await listFiles(env, agent, { dir: "memory/" });
    expect(memory.map((entry) => entry.path)).toEqual([
      "memory/2026-01-01.md",
      "memory/2026-01-02.md",
    ]);

    const many = await readFiles(env, agent, ["notes.md", "missing.md", "memory/2026-01-01.md"]);
    expect([...many.keys()].sort()).toEqual(["memory/2026-01-01.md", "notes.md"]);
  });

  it("keeps agents' workspaces apart", async () => {
    const a = agentId();
    const b = agentId();
    await writeFile(env, a, "SOUL.md", "a's soul");
    expect(await readFile(env, b, "SOUL.md")).toBeNull();
    expect(await listFiles(env, b)).toEqual([]);
  });

  it("refuses a write with a stale expected version and keeps the newer content", async () => {
    const agent = agentId();
    await writeFile(env, agent, "MEMORY.md", "v1");
    await writeFile(env, agent, "MEMORY.md", "v2", { expectedVersion: 1 });
    const error = await expectWorkspaceError(
      writeFile(env, agent, "MEMORY.md", "lost", { expectedVersion: 1 }),
      "version_conflict",
    );
    expect(error.message).toMatch(/expected version 1, current version 2/);
    expect((await readFile(env, agent, "MEMORY.md"))?.content).toBe("v2");

    await expectWorkspaceError(
      writeFile(env, agent, "MEMORY.md", "x", { expectedVersion: 0 }),
      "version_conflict",
    );
    const created = await writeFile(env, agent, "new.md", "x", { expectedVersion: 0 });
    expect(created.version).toBe(1);
    await expectWorkspaceError(
      writeFile(env, agent, "gone.md", "x", { expectedVersion: 3 }),
      "version_conflict",
    );
  });

  it("refuses files over 1 MiB and changes nothing", async () => {
    const agent = agentId();
    await writeFile(env, agent, "big.md", "small");
    const tooBig = "é".repeat(MAX_WORKSPACE_FILE_BYTES / 2 + 1);
    const error = await expectWorkspaceError(writeFile(env, agent, "big.md", tooBig), "too_large");
    expect(error.message).toMatch(/at most 1048576 bytes/);
    expect((await readFile(env, agent, "big.md"))?.content).toBe("small");
  });

  it("edits exactly one match and explains zero or several matches", async () => {
    const agent = agentId();
    await writeFile(env, agent, "AGENTS.md", "# Rules\n- be kind\n- be brief\n");
    const edited = await editFile(env, agent, "AGENTS.md", "- be brief", "- be very brief");
    expect(edited).toMatchObject({ version: 2, offset: 18 });
    expect((await readFile(env, agent, "AGENTS.md"))?.content).toBe(
      "# Rules\n- be kind\n- be very brief\n",
    );

    const none = await expectWorkspaceError(
      editFile(env, agent, "AGENTS.md", "be rude", "x"),
      "no_match",
    );
    expect(none.message).toMatch(/not found in AGENTS.md/);
    const many = await expectWorkspaceError(
      editFile(env, agent, "AGENTS.md", "- be", "x"),
      "ambiguous_match",
    );
    expect(many.message).toMatch(/occurs 2 times/);
    await expectWorkspaceError(editFile(env, agent, "nope.md", "a", "b"), "not_found");
    await expectWorkspaceError(editFile(env, agent, "AGENTS.md", "", "b"), "no_match");
    await expectWorkspaceError(
      editFile(env, agent, "AGENTS.md", "kind", "b", { expectedVersion: 1 }),
      "version_conflict",
    );
    expect((await readFile(env, agent, "AGENTS.md"))?.version).toBe(2);
  });

  it("deletes a file", async () => {
    const agent = agentId();
    await writeFile(env, agent, "BOOTSTRAP.md", "ritual");
    expect(await deleteFile(env, agent, "BOOTSTRAP.md")).toBe(true);
    expect(await deleteFile(env, agent, "BOOTSTRAP.md")).toBe(false);
    expect(await readFile(env, agent, "BOOTSTRAP.md")).toBeNull();
  });
});

describe("workspace seeding", () => {
  const seed = {
    "AGENTS.md": "# Agents",
    "SOUL.md": "# Soul",
    "BOOTSTRAP.md": "# Hello, who am I?",
  };

  it("copies the seed into a new workspace once, and never over the user's edits", async () => {
    const agent = agentId();
    const first = await ensureWorkspaceSeeded(env, agent, seed);
    expect(first).toEqual({ seeded: ["AGENTS.md", "BOOTSTRAP.md", "SOUL.md"], fresh: true });

    await writeFile(env, agent, "SOUL.md", "edited soul");
    const again = await ensureWorkspaceSeeded(env, agent, seed);
    expect(again).toEqual({ seeded: [], fresh: false });
    expect((await readFile(env, agent, "SOUL.md"))?.content).toBe("edited soul");
  });

  it("is safe when two sessions seed the same agent at once", async () => {
    const agent = agentId();
    const results = await Promise.all([
      ensureWorkspaceSeeded(env, agent, seed),
      ensureWorkspaceSeeded(env, agent, seed),
      ensureWorkspaceSeeded(env, agent, seed),
    ]);
    const inserted = results.flatMap((result) => result.seeded).sort();
    expect(inserted).toEqual(["AGENTS.md", "BOOTSTRAP.md", "SOUL.md"]);
    const files = await listFiles(env, agent);
    expect(files.map((file) => [file.path, file.version])).toEqual([
      ["AGENTS.md", 1],
      ["BOOTSTRAP.md", 1],
      ["SOUL.md", 1],
    ]);
  });

  it("does not re-seed BOOTSTRAP.md into a workspace that was seeded and later emptied", async () => {
    const agent = agentId();
    await ensureWorkspaceSeeded(env, agent, seed);
    for (const file of await listFiles(env, agent)) await deleteFile(env, agent, file.path);

    const reseeded = await ensureWorkspaceSeeded(env, agent, seed);
    expect(reseeded).toEqual({ seeded: ["AGENTS.md", "SOUL.md"], fresh: false });
    expect(await readFile(env, agent, "BOOTSTRAP.md")).toBeNull();
  });

  it("creates nothing when skipBootstrap is set", async () => {
    const agent = agentId();
    expect(await ensureWorkspaceSeeded(env, agent, seed, { skipBootstrap: true })).toEqual({
      seeded: [],
      fresh: false,
    });
    expect(await listFiles(env, agent)).toEqual([]);
  });

  it("rejects a seed with an unsafe path before writing anything", async () => {
    const agent = agentId();
    await expectWorkspaceError(
      ensureWorkspaceSeeded(env, agent, { "AGENTS.md": "a", "../x.md": "b" }),
      "invalid_path",
    );
    expect(await listFiles(env, agent)).toEqual([]);
  });
});
