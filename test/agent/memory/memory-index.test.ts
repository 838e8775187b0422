import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chunkMarkdown } from "../../../functions/agent/memory/chunking.ts";
import {
  memoryIndexIsStale,
  memoryIndexStatus,
  syncMemoryIndex,
} from "../../../functions/agent/memory/indexer.ts";
import { searchMemory } from "../../../functions/agent/memory/search.ts";
import { writeFile } from "../../../functions/agent/workspace.ts";
import { embeddingCalls, memoryAgent, memoryConfig, seed } from "./helpers.ts";

const menv = env as unknown as Record<string, unknown> & typeof env;

describe("chunking", () => {
  it("cuts at ~tokens×4 characters on line boundaries, repeats ~overlap×4 characters, and covers every line", () => {
    const lines = Array.from(
      { length: 100 },
      (_, i) => `line ${String(i + 1).padStart(3, "0")} ${"x".repeat(30)}`,
    ); // 39 chars + newline
    const chunks = chunkMarkdown(lines.join("\n"), { tokens: 100, overlap: 20 }); // 400 chars, 80 overlap
    expect(chunks[0]).toMatchObject({ startLine: 1, endLine: 10 }); // 10 lines × 40 = 400
    // The next chunk starts two lines back (2 × 40 = 80 characters of overlap).
    expect(chunks[1]).toMatchObject({ startLine: 9, endLine: 18 });
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(400);
    expect(chunks.at(-1)!.endLine).toBe(100);
    for (let i = 1; i < chunks.length; i++)
      expect(chunks[i]!.startLine).toBeGreaterThan(chunks[i - 1]!.startLine);
  });

  it("uses OpenClaw's defaults (400 tokens, 80 overlap) from the config", () => {
    expect(memoryConfig().memory.search.chunking).toEqual({ tokens: 400, overlap: 80 });
  });

  it("splits one very long line into pieces that keep its line number, and skips blank text", () => {
    const chunks = chunkMarkdown(`intro\n${"y".repeat(1000)}`, { tokens: 100, overlap: 0 });
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 1],
      [2, 2],
      [2, 2],
      [2, 2],
    ]);
    expect(chunks.slice(1).map((c) => c.text.length)).toEqual([400, 400, 200]);
    expect(chunkMarkdown("\n  \n\n", { tokens: 100, overlap: 20 })).toEqual([]);
  });
});

describe("keyword-only search", () => {
  it("ranks by keywords with no provider, says so, and needs no embeddings", async () => {
    const agentId = memoryAgent();
    const config = memoryConfig({ provider: "none" });
    await seed(agentId, {
      "MEMORY.md": "# Facts\nThe staging database password rotates every Friday.\n",
      "memory/2026-01-02.md": "Lunch with Ada. We talked about the garden.\n",
      "memory/2026-01-03.md":
        "Deploy checklist: database migrations first, then the database backups, then the workers.\n",
      "notes.md": "database database database (not a memory file)\n",
    });
    await syncMemoryIndex(menv, config, agentId);
    const outcome = await searchMemory(menv, config, agentId, "database backups", {
      includePrivate: true,
      now: new Date("2026-01-04T00:00:00Z"),
    });
    expect(outcome.status).toBe("ok");
    if (outcome.status !== "ok") return;
    expect(outcome.mode).toBe("keyword-only");
    expect(outcome.note).toMatch(/keyword-only search: memory\.search\.provider is "none"/);
    expect(outcome.results.map((r) => r.path)).toEqual(["memory/2026-01-03.md", "MEMORY.md"]);
    expect(outcome.results[0]!.score).toBeGreaterThan(outcome.results[1]!.score);
  });
});

describe("hybrid search", () => {
  it("merges vector and keyword scores: a same-meaning note ranks, an exact term ranks first", async () => {
    const agentId = memoryAgent();
    const config = memoryConfig();
    await seed(agentId, {
      "MEMORY.md": "Ada drives a sedan.\n",
      "memory/2026-02-01.md":
        "Bought a new router for the flat; the wifi password is on the fridge.\n",
      "USER.md": "Prefers answers in British English.\n",
    });
    const report = await syncMemoryIndex(menv, config, agentId);
    expect(report).toMatchObject({ files: 3, indexed: 3, embedded: 3 });

    // "automobile" appears nowhere: keyword search finds nothing, the vector path finds the sedan.
    const keywordOnly = await searchMemory(
      menv,
      memoryConfig({ provider: "none" }),
      agentId,
      "automobile",
      { includePrivate: true },
    );
    expect(keywordOnly.status === "ok" && keywordOnly.results).toEqual([]);
    const hybrid = await searchMemory(menv, config, agentId, "automobile", {
      includePrivate: true,
    });
    expect(hybrid.status).toBe("ok");
    if (hybrid.status !== "ok") return;
    expect(hybrid.mode).toBe("hybrid");
    expect(hybrid.results[0]).toMatchObject({ path: "MEMORY.md", startLine: 1, endLine: 1 });
    expect(hybrid.results[0]!.textScore).toBe(0);
    expect(hybrid.results[0]!.vectorScore).toBeGreaterThan(0.35);

    // A query that matches the router note by meaning and by words ranks it above the sedan.
    const both = await searchMemory(menv, config, agentId, "wifi router password", {
      includePrivate: true,
      now: new Date("2026-02-02T00:00:00Z"),
      minScore: 0,
    });
    if (both.status !== "ok") throw new Error("unexpected");
    expect(both.results[0]!.path).toBe("memory/2026-02-01.md");
    expect(both.results[0]!.textScore).toBeGreaterThan(0);
    const sedan = both.results.find((r) => r.path === "MEMORY.md");
    if (sedan) expect(sedan.score).toBeLessThan(both.results[0]!.score);
  });

  it("halves a dated note's weight every 30 days; MEMORY.md never decays", async () => {
    const agentId = memoryAgent();
    const config = memoryConfig({ provider: "none" });
    await seed(agentId, {
      "memory/2026-01-01.md": "kiwi harvest notes\n",
      "MEMORY.md": "kiwi harvest notes\n",
    });
    await syncMemoryIndex(menv, config, agentId);
    const outcome = await searchMemory(menv, config, agentId, "kiwi harvest", {
      includePrivate: true,
      now: new Date("2026-01-31T00:00:00Z"),
    });
    if (outcome.status !== "ok") throw new Error("unexpected");
    const [first, second] = outcome.results;
    expect(first!.path).toBe("MEMORY.md");
    expect(second!.score / first!.score).toBeCloseTo(0.5, 5);
  });
});

describe("index upkeep", () => {
  it("reindexes only changed files, drops deleted ones, and rebuilds everything when the model changes", async () => {
    const agentId = memoryAgent();
    const modelA = `fake-embed-a-${agentId}`;
    const modelB = `fake-embed-b-${agentId}`;
    await seed(agentId, {
      "MEMORY.md": "The family car is a red automobile.\n",
      "memory/2026-03-01.md": "Walked the puppy.\n",
    });
    const configA = memoryConfig({ model: modelA });
    expect(await syncMemoryIndex(menv, configA, agentId)).toMatchObject({ indexed: 2 });
    expect(await memoryIndexIsStale(menv, configA, agentId)).toBe(false);
    expect(await syncMemoryIndex(menv, configA, agentId)).toMatchObject({ indexed: 0, removed: 0 });

    await writeFile(env, agentId, "memory/2026-03-01.md", "Walked the puppy twice.\n");
    expect(await memoryIndexIsStale(menv, configA, agentId)).toBe(true);
    expect(await syncMemoryIndex(menv, configA, agentId)).toMatchObject({ indexed: 1 });
    // One request per indexed file: two at first, then only the changed one (none for the no-op sync).
    expect((await embeddingCalls(modelA)).length).toBe(3);

    // Another model: every file is embedded again with it, and vector search works in the new space.
    const configB = memoryConfig({ model: modelB });
    expect(await memoryIndexIsStale(menv, configB, agentId)).toBe(true);
    expect(await syncMemoryIndex(menv, configB, agentId)).toMatchObject({
      indexed: 2,
      embedded: 2,
    });
    const hit = await searchMemory(menv, configB, agentId, "vehicle", { includePrivate: true });
    expect(hit.status === "ok" && hit.results[0]?.path).toBe("MEMORY.md");
    const status = await memoryIndexStatus(menv, configB, agentId);
    expect(status).toMatchObject({
      files: 2,
      chunks: 2,
      embeddedChunks: 2,
      provider: "openai",
      model: modelB,
      stale: false,
    });

    // Chunking is part of the fingerprint too.
    expect(
      await memoryIndexIsStale(
        menv,
        memoryConfig({ model: modelB, chunking: { tokens: 200, overlap: 40 } }),
        agentId,
      ),
    ).toBe(true);
  });
});

describe("provider failure", () => {
  it("an explicitly configured provider that fails makes memory_search report memory unavailable", async () => {
    const agentId = memoryAgent();
    await seed(agentId, { "MEMORY.md": "Ada likes tea.\n" });
    await syncMemoryIndex(menv, memoryConfig({ provider: "none" }), agentId);
    for (const broken of [
      memoryConfig({ model: "fail-embed" }),
      memoryConfig({ apiKey: "bad-key" }),
    ]) {
      const outcome = await searchMemory(menv, broken, agentId, "tea", { includePrivate: true });
      expect(outcome.status).toBe("unavailable");
      if (outcome.status === "unavailable")
        expect(outcome.reason).toMatch(
          /^memory unavailable: the embedding provider "openai" failed \(embeddings endpoint answered (503|401)/,
        );
    }
    // An explicit provider that cannot embed does not index silently without vectors either.
    await writeFile(env, agentId, "MEMORY.md", "Ada likes green tea.\n");
    await expect(
      syncMemoryIndex(menv, memoryConfig({ model: "fail-embed" }), agentId),
    ).rejects.toThrow(/503/);
  });

  it("with provider auto, a failing endpoint falls back to keywords and says why", async () => {
    const agentId = memoryAgent();
    const config = memoryConfig({ provider: undefined, model: "fail-embed" });
    await seed(agentId, { "MEMORY.md": "Ada likes tea.\n" });
    const report = await syncMemoryIndex(menv, config, agentId);
    expect(report.degraded).toMatch(/503/);
    const outcome = await searchMemory(menv, config, agentId, "tea", { includePrivate: true });
    expect(outcome).toMatchObject({
      status: "ok",
      mode: "keyword-only",
      note: expect.stringMatching(/embeddings failed/),
    });
    if (outcome.status === "ok") expect(outcome.results[0]?.path).toBe("MEMORY.md");
  });
});

describe("privacy in the index", () => {
  it("without the owner's private session, MEMORY.md and memory/ never match; USER.md still does", async () => {
    const agentId = memoryAgent();
    const config = memoryConfig();
    await seed(agentId, {
      "MEMORY.md": "The vault code is 4471 zebra.\n",
      "memory/2026-01-01.md": "zebra vault note\n",
      "USER.md": "Call me Ada. zebra fan.\n",
    });
    await syncMemoryIndex(menv, config, agentId);
    const outcome = await searchMemory(menv, config, agentId, "zebra vault code", {
      includePrivate: false,
      minScore: 0,
    });
    if (outcome.status !== "ok") throw new Error("unexpected");
    expect(outcome.results.map((r) => r.path)).toEqual(["USER.md"]);
    const owner = await searchMemory(menv, config, agentId, "zebra vault code", {
      includePrivate: true,
      minScore: 0,
    });
    if (owner.status !== "ok") throw new Error("unexpected");
    expect(owner.results.map((r) => r.path)).toContain("MEMORY.md");
  });
});

describe("memory_search tool with a failing provider", () => {
  it('answers "memory unavailable" (an error the model sees), whether the index or the query cannot be embedded', async () => {
    const { createMemorySearchTool } = await import(
      "../../../functions/agent/tools/memory-search.ts"
    );
    const { toolContext } = await import("../tools/context.ts");
    const agentId = memoryAgent();
    await seed(agentId, { "MEMORY.md": "Ada likes tea.\n" });
    // No keeper binding: the tool syncs in place with this config (the keeper would use the deployed one).
    const { MEMORY_INDEX: _keeper, ...envWithoutKeeper } = menv;
    for (const config of [
      memoryConfig({ model: "fail-embed" }),
      memoryConfig({ apiKey: "bad-key" }),
    ]) {
      const tool = createMemorySearchTool(config)!;
      const result = await tool.execute(
        { query: "tea" },
        toolContext({ agentId, config, env: envWithoutKeeper }),
      );
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^memory unavailable: /);
    }
    const ok = await createMemorySearchTool(memoryConfig())!.execute(
      { query: "tea" },
      toolContext({ agentId, config: memoryConfig(), env: envWithoutKeeper }),
    );
    expect(ok.content).toContain("mode: hybrid");
    expect(ok.content).toContain("MEMORY.md#L1-L1");
  });
});
