import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  memoryIndexIsStale,
  memoryIndexStatus,
  syncMemoryIndex,
} from "../../../functions/agent/memory/indexer.ts";
import { searchMemory } from "../../../functions/agent/memory/search.ts";
import { parseConfig } from "../../../functions/channels/gateway-config.ts";
import { fakeModelUrl, memoryAgent, memoryConfig, seed } from "./helpers.ts";

// env.AI is the loopback Workers AI stand-in (vitest.config.ts → test/fakes/workers-ai-binding.js).
const menv = env as unknown as Record<string, unknown> & typeof env;
const BGE = "@cf/baai/bge-base-en-v1.5";

function workersAiConfig(search: Record<string, unknown> = {}) {
  return parseConfig({ memory: { search: { provider: "workers-ai", ...search } } });
}

async function workersAiCalls(model: string): Promise<Array<{ body: { text: string[] } }>> {
  const response = await fetch(
    `${fakeModelUrl()}/_control/requests?scenario=${encodeURIComponent(`workers-ai:${model}`)}`,
  );
  return ((await response.json()) as { requests: Array<{ body: { text: string[] } }> }).requests;
}

const NOTES = {
  "MEMORY.md": "Ada drives a sedan.\n",
  "memory/2026-02-01.md": "Bought a new router for the flat.\n",
};

describe("Workers AI embeddings (the AI binding)", () => {
  it("provider workers-ai embeds the index and the query through env.AI.run with bge-base by default", async () => {
    const agentId = memoryAgent();
    const config = workersAiConfig();
    await seed(agentId, NOTES);
    const before = (await workersAiCalls(BGE)).length;
    expect(await syncMemoryIndex(menv, config, agentId)).toMatchObject({ indexed: 2, embedded: 2 });
    // "automobile" is in no file: only the vector path (Workers AI vectors) can find the sedan.
    const outcome = await searchMemory(menv, config, agentId, "automobile", {
      includePrivate: true,
    });
    expect(outcome).toMatchObject({ status: "ok", mode: "hybrid" });
    if (outcome.status === "ok")
      expect(outcome.results[0]).toMatchObject({ path: "MEMORY.md", textScore: 0 });
    const calls = (await workersAiCalls(BGE)).slice(before);
    expect(calls.map((call) => call.body.text)).toEqual(
      expect.arrayContaining([["Ada drives a sedan."], ["automobile"]]),
    );
    expect(await memoryIndexStatus(menv, config, agentId)).toMatchObject({
      provider: "workers-ai",
      model: BGE,
      embeddedChunks: 2,
      stale: false,
    });
  });

  it("auto uses the binding when no OpenAI-compatible key or base URL is configured, and a configured endpoint still wins", async () => {
    const agentId = memoryAgent();
    await seed(agentId, NOTES);
    const auto = parseConfig({ memory: { search: { model: `auto-${agentId}` } } });
    expect(await syncMemoryIndex(menv, auto, agentId)).toMatchObject({ embedded: 2 });
    expect((await workersAiCalls(`auto-${agentId}`)).length).toBe(2);
    expect(await memoryIndexStatus(menv, auto, agentId)).toMatchObject({ provider: "workers-ai" });
    // Without the binding, auto is keyword-only, as before.
    const { AI: _ai, ...unbound } = menv;
    expect(await memoryIndexStatus(unbound, auto, agentId)).toMatchObject({
      provider: expect.stringMatching(/^none/),
    });
    // With an endpoint configured, auto keeps using it (the binding is the fallback, not an override).
    expect(
      await memoryIndexStatus(menv, memoryConfig({ provider: undefined }), agentId),
    ).toMatchObject({ provider: "auto", model: "fake-embed" });
  });

  it("switching between an OpenAI-compatible endpoint and Workers AI rebuilds the index (another vector space)", async () => {
    const agentId = memoryAgent();
    await seed(agentId, NOTES);
    await syncMemoryIndex(menv, memoryConfig(), agentId);
    expect(await memoryIndexIsStale(menv, memoryConfig(), agentId)).toBe(false);
    expect(await memoryIndexIsStale(menv, workersAiConfig(), agentId)).toBe(true);
    expect(await syncMemoryIndex(menv, workersAiConfig(), agentId)).toMatchObject({
      indexed: 2,
      embedded: 2,
    });
    expect(
      await memoryIndexIsStale(
        menv,
        workersAiConfig({ model: "@cf/baai/bge-small-en-v1.5" }),
        agentId,
      ),
    ).toBe(true);
  });

  it("sends at most 100 texts per AI.run call, whatever memory.search.batchSize says", async () => {
    const agentId = memoryAgent();
    const model = `batch-${agentId}`;
    const lines = Array.from({ length: 150 }, (_, i) => `note ${i} ${"word ".repeat(20)}`);
    await seed(agentId, { "MEMORY.md": lines.join("\n") });
    const report = await syncMemoryIndex(
      menv,
      workersAiConfig({ model, batchSize: 500, chunking: { tokens: 32, overlap: 0 } }),
      agentId,
    );
    expect(report.chunks).toBeGreaterThan(100);
    const sizes = (await workersAiCalls(model)).map((call) => call.body.text.length);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(report.chunks);
  });

  it("explicit workers-ai that fails or is not bound reports memory unavailable; auto falls back to keywords", async () => {
    const agentId = memoryAgent();
    await seed(agentId, { "MEMORY.md": "Ada likes tea.\n" });
    await syncMemoryIndex(menv, parseConfig({ memory: { search: { provider: "none" } } }), agentId);
    const failing = await searchMemory(
      menv,
      workersAiConfig({ model: "fail-model" }),
      agentId,
      "tea",
      { includePrivate: true },
    );
    expect(failing).toMatchObject({
      status: "unavailable",
      reason: expect.stringMatching(
        /^memory unavailable: the embedding provider "workers-ai" failed \(Workers AI embeddings failed: .*3040/,
      ),
    });
    const { AI: _ai, ...unbound } = menv;
    const missing = await searchMemory(unbound, workersAiConfig(), agentId, "tea", {
      includePrivate: true,
    });
    expect(missing).toMatchObject({
      status: "unavailable",
      reason: expect.stringMatching(/no AI binding/),
    });

    const auto = parseConfig({ memory: { search: { model: "fail-model" } } });
    expect((await syncMemoryIndex(menv, auto, agentId)).degraded).toMatch(/3040/);
    const soft = await searchMemory(menv, auto, agentId, "tea", { includePrivate: true });
    expect(soft).toMatchObject({
      status: "ok",
      mode: "keyword-only",
      note: expect.stringMatching(/embeddings failed/),
    });
  });
});
