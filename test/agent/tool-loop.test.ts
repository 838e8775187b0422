import { describe, expect, it } from "vitest";
import { parseConfig } from "../../functions/channels/gateway-config.ts";
import { runAgentLoop, type RunHost } from "../../functions/agent/run-loop.ts";
import {
  agentLoopDetection,
  loopDetectionFor,
} from "../../functions/config/loop-detection-schema.ts";
import type {
  AgentTool,
  Message,
  ModelRequest,
  ModelResult,
  ToolCall,
} from "../../functions/agent/types.ts";
import { toolContext } from "./tools/context.ts";

/**
 * tools.loopDetection through the real agent loop: the host keeps the transcript in memory (as the
 * SessionDO keeps it in SQLite), the tools really execute and count their runs, and the model is a
 * script that keeps asking for the same calls, as a small model stuck in a loop does.
 */

function memoryHost(): RunHost & { log: Message[] } {
  const log: Message[] = [];
  let rounds = 0;
  return {
    log,
    messages: () => log,
    runMessages: () => log,
    append: (message) => void log.push(message),
    recordUsage: () => void rounds++,
    takeSteerMessages: () => [],
    hasSteerMessages: () => false,
    onTextDelta: () => {},
    onTool: () => {},
    roundsUsed: () => rounds,
    shouldYield: () => false,
  };
}

function countingTool(name: string, result: (n: number, args: Record<string, unknown>) => string) {
  const runs = { count: 0 };
  const tool: AgentTool = {
    name,
    description: name,
    parameters: { type: "object", properties: {} },
    execute: async (args) => ({ content: result(++runs.count, args) }),
  };
  return { tool, runs };
}

/** A model that asks for `next(round)` until it returns undefined, then answers "done". */
function scriptedModel(next: (round: number, request: ModelRequest) => ToolCall[] | undefined) {
  let round = 0;
  const requests: ModelRequest[] = [];
  const callModel = async (request: ModelRequest): Promise<ModelResult> => {
    requests.push({ ...request, messages: [...request.messages] });
    const calls = next(++round, request);
    return {
      text: calls ? "" : "done",
      toolCalls: calls ?? [],
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      stopReason: calls ? "tool_use" : "end",
      modelRef: "fake/loop",
    };
  };
  return { callModel, requests };
}

const call = (round: number, name: string, args: Record<string, unknown>): ToolCall => ({
  id: `call-${round}-${name}`,
  name,
  arguments: args,
});

function loopConfig(loopDetection?: Record<string, unknown>) {
  return parseConfig(loopDetection ? { tools: { loopDetection } } : {}).tools.loopDetection;
}

async function run(
  tools: AgentTool[],
  model: ReturnType<typeof scriptedModel>,
  loopDetection = loopConfig({ enabled: true }),
  maxToolIterations = 60,
) {
  const host = memoryHost();
  host.append({ role: "user", content: "wait for the build" });
  const outcome = await runAgentLoop(host, {
    system: "test",
    tools,
    toolContext: toolContext(),
    maxToolIterations,
    maxToolResultChars: 10_000,
    callModel: model.callModel,
    signal: new AbortController().signal,
    loopDetection,
  });
  const results = host.log.filter(
    (m): m is Extract<Message, { role: "tool" }> => m.role === "tool",
  );
  return { outcome, results, host };
}

const poll = (round: number) => [call(round, "process", { action: "poll", sessionId: "s1" })];

describe("tools.loopDetection", () => {
  it("is off by default, as in OpenClaw: 25 identical polls all run", async () => {
    const { tool, runs } = countingTool("process", () =>
      JSON.stringify({ status: "running", output: "" }),
    );
    const model = scriptedModel((round) => (round <= 25 ? poll(round) : undefined));
    const { outcome, results } = await run([tool], model, loopConfig());
    expect(runs.count).toBe(25);
    expect(outcome.finalText).toBe("done");
    expect(results.some((r) => r.content.includes("loop detection"))).toBe(false);
  });

  it("a poll that never changes warns at warningThreshold, then blocks its batch at criticalThreshold without running it", async () => {
    // Volatile fields (durationMs, pid) change every call and must not count as progress.
    const { tool, runs } = countingTool("process", (n) =>
      JSON.stringify({ status: "running", output: "", durationMs: n * 1000, pid: 4000 + n }),
    );
    const model = scriptedModel((round) => (round <= 20 ? poll(round) : undefined));
    const { outcome, results } = await run([tool], model);
    expect(runs.count).toBe(19); // the 20th poll was blocked before it ran
    expect(results[8]!.content).not.toContain("loop detection warning");
    expect(results[9]!.content).toContain(
      "[loop detection warning: process was polled 9 times and nothing changed",
    );
    expect(results[19]!.content).toMatch(
      /^Blocked by loop detection \(tools\.loopDetection, knownPollNoProgress\): process was polled 19 times/,
    );
    expect(results[19]!.isError).toBe(true);
    // After the first block the model gets one more answer: here it stops polling and says so.
    expect(outcome.finalText).toBe("done");
  });

  it("a second critical loop in the same run ends the run with one notice", async () => {
    const { tool, runs } = countingTool("process", () => '{"status":"running"}');
    const model = scriptedModel((round) => (round <= 40 ? poll(round) : undefined));
    const { outcome, results, host } = await run([tool], model);
    expect(runs.count).toBe(19);
    expect(results.filter((r) => r.content.startsWith("Blocked by loop detection"))).toHaveLength(
      2,
    );
    expect(outcome.finalText).toMatch(
      /^Stopped: the agent kept repeating itself \(process was polled 19 times/,
    );
    expect(host.log.at(-1)).toEqual({ role: "assistant", content: outcome.finalText });
  });

  it("a poll whose output changes is progress: never blocked", async () => {
    const { tool, runs } = countingTool("process", (n) =>
      JSON.stringify({ status: "running", output: `line ${n}` }),
    );
    const model = scriptedModel((round) => (round <= 35 ? poll(round) : undefined));
    const { outcome, results } = await run([tool], model);
    expect(runs.count).toBe(35);
    expect(outcome.finalText).toBe("done");
    expect(results.some((r) => r.content.startsWith("Blocked"))).toBe(false);
  });

  it("genericRepeat only warns: the same read with changing results is never blocked", async () => {
    const { tool, runs } = countingTool("read", (n) => `contents v${n}`);
    const model = scriptedModel((round) =>
      round <= 24 ? [call(round, "read", { path: "a.txt" })] : undefined,
    );
    const { results } = await run([tool], model);
    expect(runs.count).toBe(24);
    expect(results[9]!.content).toContain("read was already called 9 times with these arguments");
    expect(results.some((r) => r.content.startsWith("Blocked"))).toBe(false);
  });

  it("pingPong: two calls alternating with unchanged results warn, then block", async () => {
    const a = countingTool("read", () => "same A");
    const b = countingTool("edit", () => "same B");
    const model = scriptedModel((round) =>
      round <= 30
        ? [round % 2 ? call(round, "read", { path: "x" }) : call(round, "edit", { path: "x" })]
        : undefined,
    );
    const { results } = await run(
      [a.tool, b.tool],
      model,
      loopConfig({ enabled: true, detectors: { genericRepeat: false } }),
    );
    const warnedAt = results.findIndex((r) => r.content.includes("alternate between two calls"));
    const blockedAt = results.findIndex((r) =>
      r.content.startsWith("Blocked by loop detection (tools.loopDetection, pingPong)"),
    );
    expect(warnedAt).toBe(9);
    expect(blockedAt).toBe(19);
    // 19 before the block; after it the alternation starts over (the blocked call is not history), so rounds 21-30 run.
    expect(a.runs.count + b.runs.count).toBe(29);
  });

  it("the global circuit breaker stops any call repeated with the same result, even with the detectors off", async () => {
    const { tool, runs } = countingTool("session_status", () => '{"model":"x"}');
    const model = scriptedModel((round) =>
      round <= 12 ? [call(round, "session_status", {})] : undefined,
    );
    const config = loopConfig({
      enabled: true,
      warningThreshold: 3,
      criticalThreshold: 4,
      globalCircuitBreakerThreshold: 5,
      detectors: { genericRepeat: false, knownPollNoProgress: false, pingPong: false },
    });
    const { results } = await run([tool], model, config);
    expect(runs.count).toBe(4);
    expect(results[4]!.content).toMatch(
      /globalCircuitBreaker\): session_status was called 4 times with the same arguments and returned the same result/,
    );
  });

  it("the whole batch is blocked before any of it runs", async () => {
    const polls = countingTool("process", () => '{"status":"running"}');
    const reads = countingTool("read", (n) => `r${n}`);
    const model = scriptedModel((round) =>
      round <= 20
        ? round < 20
          ? poll(round)
          : [call(round, "read", { path: "b" }), ...poll(round)]
        : undefined,
    );
    await run([polls.tool, reads.tool], model);
    expect(reads.runs.count).toBe(0);
    expect(polls.runs.count).toBe(19);
  });

  it("per-agent settings go over the global block, and bad thresholds are a config error", () => {
    const global = loopConfig({ enabled: false, warningThreshold: 4, criticalThreshold: 8 });
    expect(
      loopDetectionFor(global, { enabled: true, detectors: { pingPong: false } }),
    ).toMatchObject({
      enabled: true,
      warningThreshold: 4,
      criticalThreshold: 8,
      detectors: { genericRepeat: true, knownPollNoProgress: true, pingPong: false },
    });
    const agent = parseConfig({
      agents: { list: [{ id: "small", tools: { loopDetection: { enabled: true } } }] },
    });
    expect(agentLoopDetection(agent, "small").enabled).toBe(true);
    expect(agentLoopDetection(agent, "main").enabled).toBe(false);
    // OpenClaw's own spelling, agents.entries.<id>, works too.
    const entries = parseConfig({
      agents: { entries: { small: { tools: { loopDetection: { enabled: true } } } } },
    });
    expect(agentLoopDetection(entries, "small").enabled).toBe(true);
    expect(() =>
      parseConfig({ tools: { loopDetection: { warningThreshold: 9, criticalThreshold: 9 } } }),
    ).toThrow(/warningThreshold must be below criticalThreshold/);
  });
});
