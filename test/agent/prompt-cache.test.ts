import { describe, expect, it } from "vitest";
import { resolveModel } from "../../functions/agent/model-resolve.ts";
import { callAnthropic } from "../../functions/agent/providers/anthropic.ts";
import type { Message, ModelRequest, Usage } from "../../functions/agent/types.ts";
import { newScenario, recorded, suiteConfig, testEnv, userSays } from "./model-helpers.ts";

/**
 * Anthropic prompt caching (#24 item 4): the real Anthropic adapter against the fake model
 * server, whose usage for requests with cache_control comes from an emulation of Anthropic's
 * prompt cache (test/fakes/anthropic-cache.ts). A 10-turn session whose system prompt ends in a
 * line that changes every turn (the time) must still read most of its input from the cache.
 */
const REF = "fakeanthropic/claude-test";

function modelWith(cacheRetention?: "none" | "short" | "long") {
  const defaults = {
    ...suiteConfig.agents.defaults,
    ...(cacheRetention ? { models: { [REF]: { params: { cacheRetention } } } } : {}),
  };
  return resolveModel(
    { ...suiteConfig, agents: { ...suiteConfig.agents, defaults } },
    testEnv,
    REF,
  );
}

const stable = `You are a careful assistant.\n\n${"## Workspace rules\nKeep answers short and cite files.\n".repeat(160)}`;
const tools = [
  {
    name: "read",
    description: "Read a workspace file",
    parameters: { type: "object" as const, properties: { path: { type: "string" } } },
  },
];

async function session(cacheRetention: "none" | "short" | "long" | undefined, turns = 10) {
  const model = modelWith(cacheRetention);
  const scenario = newScenario(`cache-${cacheRetention ?? "default"}`);
  const history: Message[] = [];
  const usages: Usage[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    history.push(userSays(scenario, `question ${turn}: what does rule ${turn} say?`));
    const dynamic = `## Current date\n2026-12-02 10:${String(turn).padStart(2, "0")} UTC`;
    const request: ModelRequest = {
      system: `${stable}\n\n${dynamic}`,
      systemCacheBoundary: stable.length,
      messages: [...history],
      tools,
    };
    const result = await callAnthropic(model, request);
    usages.push(result.usage);
    history.push({ role: "assistant", content: result.text });
  }
  const sum = (pick: (u: Usage) => number) => usages.reduce((n, u) => n + pick(u), 0);
  const input = sum((u) => u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens);
  return { scenario, usages, share: sum((u) => u.cacheReadTokens) / input, input };
}

describe("Anthropic prompt caching (cacheRetention)", () => {
  it("reads at least 80% of a 10-turn session's input from the cache, though the time line changes every turn", async () => {
    const { share, usages, scenario } = await session("short");
    console.log(`prompt-cache share over 10 turns: ${(share * 100).toFixed(1)}% of input tokens`);
    expect(share).toBeGreaterThanOrEqual(0.8);
    expect(usages[0]!.cacheReadTokens).toBe(0);
    expect(usages[0]!.cacheWriteTokens).toBeGreaterThan(1024);
    for (const usage of usages.slice(1))
      expect(usage.cacheReadTokens).toBeGreaterThan(usage.inputTokens);

    const [first] = await recorded(scenario);
    // Breakpoint one on the stable system block (it caches the tools before it), the changing
    // date below it uncached, breakpoint two on the newest message block.
    expect(first!.body.system).toEqual([
      { type: "text", text: stable.trimEnd(), cache_control: { type: "ephemeral" } },
      { type: "text", text: "## Current date\n2026-12-02 10:01 UTC" },
    ]);
    expect(first!.body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: "ephemeral" });
  });

  it('"long" asks for the 1-hour cache', async () => {
    const { scenario } = await session("long", 1);
    const [sent] = await recorded(scenario);
    expect(sent!.body.system[0].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
  });

  it('"none" — and any proxy endpoint by default — sends no breakpoint and reads nothing from the cache', async () => {
    for (const retention of ["none", undefined] as const) {
      const { share, scenario } = await session(retention, 3);
      expect(share).toBe(0);
      const sent = await recorded(scenario);
      expect(JSON.stringify(sent.map((r) => r.body))).not.toContain("cache_control");
      expect(sent[0]!.body.system).toHaveLength(1);
    }
  });
});
