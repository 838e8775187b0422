import { describe, expect, it } from "vitest";
import {
  applyPruning,
  HARD_MIN_CHARS,
  NO_DECISIONS,
  planPruning,
  SOFT_KEEP,
} from "../../functions/agent/context-pruning.ts";
import type { Message } from "../../functions/agent/types.ts";
import { contextPruningSchema } from "../../functions/config/memory-keys.ts";

/**
 * Session pruning's planner (functions/agent/context-pruning.ts) against OpenClaw's rules: nothing
 * under 30 % of the window, a soft trim of results over 4,000 characters, a hard clear from 50 %
 * with 50,000 prunable characters left, the last three assistant turns and everything before the
 * first user message untouched, tools.allow/deny, and a plan that is stable once made.
 */

const config = contextPruningSchema.parse({});

function toolRound(id: string, content: string, name = "exec"): Message[] {
  return [
    { role: "assistant", content: "", toolCalls: [{ id, name, arguments: {} }] },
    { role: "tool", toolCallId: id, name, content },
  ];
}

function session(results: Array<{ id: string; chars: number; name?: string }>): Message[] {
  return [
    { role: "tool", toolCallId: "bootstrap", name: "read", content: "b".repeat(9_000) },
    { role: "user", content: "start" },
    ...results.flatMap((r) => toolRound(r.id, `${r.id}:`.padEnd(r.chars, "x"), r.name)),
    { role: "assistant", content: "one" },
    { role: "user", content: "more" },
    ...toolRound("recent", "r".repeat(9_000)),
    { role: "assistant", content: "two" },
    { role: "assistant", content: "three" },
  ];
}

const tool = (messages: Message[], id: string) =>
  messages.find((m) => m.role === "tool" && m.toolCallId === id)!.content;

describe("session pruning plan", () => {
  it("leaves a context under 30 % of the window as it is", () => {
    const messages = session([{ id: "a", chars: 9_000 }]);
    const plan = planPruning({
      messages,
      system: "",
      contextWindowTokens: 200_000,
      decisions: NO_DECISIONS,
      config,
    });
    expect(plan).toEqual({ decisions: NO_DECISIONS, changed: false });
  });

  it("trims old results over 4,000 characters to their head and tail; the recent turns and the bootstrap stay whole", () => {
    const messages = session([
      { id: "big", chars: 9_000 },
      { id: "small", chars: 3_000 },
    ]);
    const plan = planPruning({
      messages,
      system: "",
      contextWindowTokens: 20_000,
      decisions: NO_DECISIONS,
      config,
    });
    expect(plan.changed).toBe(true);
    expect(plan.decisions).toEqual({ soft: ["big"], hard: [] });
    const pruned = applyPruning(messages, plan.decisions, config.hardClear.placeholder);
    const big = tool(pruned, "big");
    expect(big.startsWith(`big:${"x".repeat(SOFT_KEEP - 4)}`)).toBe(true);
    expect(big).toContain("characters of this old tool result trimmed");
    expect(big.length).toBeLessThan(3_200);
    expect(tool(pruned, "small")).toBe(tool(messages, "small"));
    expect(tool(pruned, "recent")).toBe(tool(messages, "recent"));
    expect(tool(pruned, "bootstrap")).toBe(tool(messages, "bootstrap"));
    // The transcript the planner read is not changed.
    expect(tool(messages, "big")).toHaveLength(9_000);
  });

  it("clears the oldest results to the placeholder from 50 % while 50,000 prunable characters remain", () => {
    const results = Array.from({ length: 40 }, (_, i) => ({ id: `r${i}`, chars: 3_900 }));
    const messages = session(results);
    const plan = planPruning({
      messages,
      system: "",
      contextWindowTokens: 60_000,
      decisions: NO_DECISIONS,
      config,
    });
    expect(plan.decisions.soft).toEqual([]);
    expect(plan.decisions.hard[0]).toBe("r0");
    const cleared = plan.decisions.hard.length;
    expect(cleared).toBeGreaterThan(0);
    // Oldest first, then it stops: under 50 % of the window, or too little left to clear.
    expect(plan.decisions.hard).toEqual(results.slice(0, cleared).map((r) => r.id));
    const left = (results.length - cleared) * 3_900;
    expect(left).toBeGreaterThanOrEqual(HARD_MIN_CHARS - 3_900);
    const pruned = applyPruning(messages, plan.decisions, config.hardClear.placeholder);
    expect(tool(pruned, "r0")).toBe("[Old tool result content cleared]");
    expect(tool(pruned, `r${cleared}`)).toBe(tool(messages, `r${cleared}`));
    const again = planPruning({
      messages,
      system: "",
      contextWindowTokens: 60_000,
      decisions: plan.decisions,
      config,
    });
    expect(again.changed).toBe(false);

    const softOnly = contextPruningSchema.parse({ hardClear: { enabled: false } });
    const trimmedOnly = planPruning({
      messages,
      system: "",
      contextWindowTokens: 60_000,
      decisions: NO_DECISIONS,
      config: softOnly,
    });
    expect(trimmedOnly.decisions.hard).toEqual([]);
  });

  it("prunes only the tools tools.allow names and tools.deny does not (globs)", () => {
    const messages = session([
      { id: "e", chars: 9_000, name: "exec" },
      { id: "w", chars: 9_000, name: "web_fetch" },
      { id: "m", chars: 9_000, name: "memory_get" },
    ]);
    const plan = (raw: unknown) =>
      planPruning({
        messages,
        system: "",
        contextWindowTokens: 20_000,
        decisions: NO_DECISIONS,
        config: contextPruningSchema.parse(raw),
      }).decisions.soft;
    expect(plan({ tools: { allow: ["web_*", "exec"] } })).toEqual(["e", "w"]);
    expect(plan({ tools: { deny: ["memory_*"] } })).toEqual(["e", "w"]);
  });

  it("needs three assistant turns before anything can be pruned", () => {
    const messages: Message[] = [
      { role: "user", content: "start" },
      ...toolRound("only", "o".repeat(20_000)),
      { role: "assistant", content: "done" },
    ];
    const plan = planPruning({
      messages,
      system: "",
      contextWindowTokens: 1_000,
      decisions: NO_DECISIONS,
      config,
    });
    expect(plan.changed).toBe(false);
  });
});
