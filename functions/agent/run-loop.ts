import type { ThinkLevel } from "../config/agents-schema.ts";
import type { MediaPart } from "../media/parts.ts";
import type {
  AgentTool,
  Message,
  ModelRequest,
  ModelResult,
  ToolCall,
  ToolContext,
  ToolSpec,
  Usage,
} from "./types.ts";
import { ModelError } from "./types.ts";
import type { LoopDetectionConfig } from "../config/loop-detection-schema.ts";
import {
  assessToolBatch,
  blockedBatches,
  LOOP_BLOCKED_PREFIX,
  LOOP_WARNING_MARKER,
  type LoopAlarm,
  type LoopVerdict,
} from "./tool-loop.ts";
import { SILENT_REPLY_TOKEN } from "./prompt.ts";

/** What the loop needs from its host (SessionDO). Every write is durable when it returns. */
export interface RunHost {
  /** The messages the model sees: the session transcript, including this run's entries so far. */
  messages(): Message[];
  /** This run's own entries so far, oldest first (the checkpoint the loop resumes from). */
  runMessages(): Message[];
  append(message: Message): void;
  recordUsage(modelRef: string, usage: Usage): void;
  /** Messages queued in steer mode since the last boundary; taking them marks them consumed. */
  takeSteerMessages(): string[];
  /** True when steer messages are waiting (checked before each tool starts). */
  hasSteerMessages(): boolean;
  onTextDelta(text: string): void;
  onTool(
    call: ToolCall,
    phase: "start" | "end",
    result?: { isError?: boolean; preview?: string },
  ): void;
  /** Model rounds this run has used so far, across every resume (durable: each call's metering row). */
  roundsUsed(): number;
  /** True when this stretch of the run should stop at the next checkpoint and continue later. */
  shouldYield(): boolean;
}

export interface RunLoopDeps {
  system: string;
  /** The length of the system prompt's stable part (ModelRequest.systemCacheBoundary). */
  systemCacheBoundary?: number;
  tools: AgentTool[];
  toolContext: ToolContext;
  maxToolIterations: number;
  /** Upper bound on one tool result kept in the transcript. */
  maxToolResultChars: number;
  callModel(request: ModelRequest): Promise<ModelResult>;
  signal: AbortSignal;
  /** tools.loopDetection for this agent; absent (or disabled): no detection. */
  loopDetection?: LoopDetectionConfig;
  /** The run's thinking level (functions/agent/thinking-level.ts); absent: off. */
  thinkLevel?: ThinkLevel;
  /**
   * The caller's own function tools (/v1/responses): offered to the model, never executed here. A
   * batch that calls one ends this stretch of the run with RunAwaitsClient once the agent's own
   * calls of the batch have run; the host appends the caller's results and runs the loop again.
   */
  clientTools?: ToolSpec[];
}

export interface RunOutcome {
  finalText: string;
  modelRef: string | undefined;
}

/**
 * Thrown at a checkpoint (between model calls) when the host asked the run to yield: everything
 * so far is in the transcript, and calling runAgentLoop again continues from there.
 */
export class RunYield extends Error {
  constructor() {
    super("run yielded at a checkpoint");
    this.name = "RunYield";
  }
}

/**
 * Thrown when every call still unanswered is a client function call: the run's transcript holds the
 * calls, and the loop continues once the host has appended the caller's results.
 */
export class RunAwaitsClient extends Error {
  constructor(
    readonly calls: ToolCall[],
    /** The text the model gave with the calls. */
    readonly text: string,
  ) {
    super("run waits for the caller's function call results");
    this.name = "RunAwaitsClient";
  }
}

export const STEER_SKIPPED_RESULT = "Skipped due to queued user message.";
export const ABORTED_TOOL_RESULT = "Aborted: the run was stopped before this tool ran.";

/**
 * The agent loop: model → tools → model … until the model answers without tool calls. It keeps no
 * state of its own: every step is appended to the host's transcript before the next begins, so a
 * loop started again after an eviction continues from the last checkpoint — a finished tool call is
 * never run twice and a model step that completed is never repeated.
 */
export async function runAgentLoop(host: RunHost, deps: RunLoopDeps): Promise<RunOutcome> {
  let modelRef: string | undefined;
  const clientNames = new Set((deps.clientTools ?? []).map((tool) => tool.name));
  const clash = deps.tools.find((tool) => clientNames.has(tool.name));
  if (clash)
    throw new Error(
      `the client function tool \`${clash.name}\` has the name of one of the agent's own tools; rename it`,
    );
  const toolSpecs: ToolSpec[] = [
    ...deps.tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
    ...(deps.clientTools ?? []),
  ];
  for (;;) {
    throwIfAborted(deps.signal);
    const pending = pendingToolCalls(host.runMessages());
    const last = host.runMessages().at(-1);
    if (last?.role === "assistant" && !pending.length && !last.toolCalls?.length) {
      return { finalText: last.content, modelRef };
    }
    // sessions_yield succeeded in the last batch: the turn ends silently (resumed runs end here too).
    if (
      !pending.length &&
      last?.role === "tool" &&
      turnEndedByTool(host.runMessages(), deps.tools)
    ) {
      host.append({ role: "assistant", content: SILENT_REPLY_TOKEN });
      return { finalText: SILENT_REPLY_TOKEN, modelRef };
    }
    const ownCalls = pending.filter((call) => !clientNames.has(call.name));
    if (pending.length && !ownCalls.length) {
      const last = host.runMessages().findLast((message) => message.role === "assistant");
      throw new RunAwaitsClient(pending, last?.content ?? "");
    }
    if (ownCalls.length) {
      const verdict = judgeBatch(host.runMessages(), ownCalls, deps.loopDetection);
      if (verdict.level === "critical") {
        const ended = blockBatch(host, ownCalls, verdict);
        if (ended) return { finalText: ended, modelRef };
        continue;
      }
      await runToolCalls(host, deps, ownCalls, verdict);
      continue;
    }
    // Counted from storage, so a resumed run cannot earn a fresh allowance: the first call answers,
    // each further one follows a tool round, and maxToolIterations bounds those rounds.
    if (host.roundsUsed() > deps.maxToolIterations) break;
    if (host.shouldYield()) throw new RunYield();
    for (const text of host.takeSteerMessages()) host.append({ role: "user", content: text });
    const result = await deps.callModel({
      system: deps.system,
      ...(deps.systemCacheBoundary !== undefined
        ? { systemCacheBoundary: deps.systemCacheBoundary }
        : {}),
      messages: host.messages(),
      tools: toolSpecs,
      ...(deps.thinkLevel ? { thinkLevel: deps.thinkLevel } : {}),
      signal: deps.signal,
      onTextDelta: (text) => host.onTextDelta(text),
    });
    modelRef = result.modelRef;
    host.recordUsage(result.modelRef, result.usage);
    host.append({
      role: "assistant",
      content: result.text,
      ...(result.toolCalls.length ? { toolCalls: result.toolCalls } : {}),
      ...(result.thinking?.length ? { thinking: result.thinking } : {}),
    });
  }
  const notice = `Stopped after ${deps.maxToolIterations} tool rounds without a final answer (agents.defaults.maxToolIterations).`;
  host.append({ role: "assistant", content: notice });
  return { finalText: notice, modelRef };
}

/** True when a tool that ends the turn (`endsTurn`) succeeded in the newest batch. */
function turnEndedByTool(runMessages: Message[], tools: readonly AgentTool[]): boolean {
  const enders = new Set(tools.filter((tool) => tool.endsTurn).map((tool) => tool.name));
  if (!enders.size) return false;
  let i = runMessages.length - 1;
  while (i >= 0 && runMessages[i]!.role === "tool") i--;
  return runMessages
    .slice(i + 1)
    .some((message) => message.role === "tool" && enders.has(message.name) && !message.isError);
}

/** Tool calls of the newest assistant message that have no result yet, in source order. */
export function pendingToolCalls(runMessages: Message[]): ToolCall[] {
  let lastAssistant = -1;
  for (let i = runMessages.length - 1; i >= 0; i--) {
    if (runMessages[i]!.role === "assistant") {
      lastAssistant = i;
      break;
    }
  }
  if (lastAssistant < 0) return [];
  const assistant = runMessages[lastAssistant] as Extract<Message, { role: "assistant" }>;
  const done = new Set(
    runMessages.slice(lastAssistant + 1).flatMap((m) => (m.role === "tool" ? [m.toolCallId] : [])),
  );
  return (assistant.toolCalls ?? []).filter((call) => !done.has(call.id));
}

/**
 * Loop detection's verdict on the newest batch, judged against the calls before it: a batch half
 * run before an eviction gets the same verdict when it resumes.
 */
function judgeBatch(
  runMessages: Message[],
  pending: ToolCall[],
  config: LoopDetectionConfig | undefined,
): LoopVerdict {
  if (!config?.enabled) return { level: "none" };
  let lastAssistant = runMessages.length - 1;
  while (lastAssistant >= 0 && runMessages[lastAssistant]!.role !== "assistant") lastAssistant--;
  const batch = runMessages[lastAssistant];
  const calls = batch?.role === "assistant" ? (batch.toolCalls ?? pending) : pending;
  return assessToolBatch(runMessages.slice(0, Math.max(0, lastAssistant)), calls, config);
}

/**
 * A critical loop: none of the batch runs, each call gets a result saying why. The first time the
 * model answers once more; the second time in one run, the run ends with a notice (returned).
 */
function blockBatch(host: RunHost, pending: ToolCall[], verdict: LoopAlarm): string | undefined {
  const earlier = blockedBatches(host.runMessages());
  const content = `${LOOP_BLOCKED_PREFIX} (tools.loopDetection, ${verdict.detector}): ${verdict.message}. No call of this batch ran. Answer with what you have, ask the user, or try something different.`;
  for (const call of pending) {
    host.onTool(call, "start");
    host.append({ role: "tool", toolCallId: call.id, name: call.name, content, isError: true });
    host.onTool(call, "end", { isError: true, preview: content.slice(0, 200) });
  }
  if (earlier === 0) return undefined;
  const notice = `Stopped: the agent kept repeating itself (${verdict.message}; tools.loopDetection).`;
  host.append({ role: "assistant", content: notice });
  return notice;
}

async function runToolCalls(
  host: RunHost,
  deps: RunLoopDeps,
  calls: ToolCall[],
  verdict: LoopVerdict = { level: "none" },
): Promise<void> {
  const byName = new Map(deps.tools.map((tool) => [tool.name, tool]));
  for (const [index, call] of calls.entries()) {
    throwIfAborted(deps.signal);
    // Steering boundary: a queued user message skips every tool call that has not started yet.
    if (host.hasSteerMessages()) {
      for (const skipped of calls.slice(index)) {
        host.onTool(skipped, "start");
        host.append({
          role: "tool",
          toolCallId: skipped.id,
          name: skipped.name,
          content: STEER_SKIPPED_RESULT,
          isError: true,
        });
        host.onTool(skipped, "end", { isError: true, preview: STEER_SKIPPED_RESULT });
      }
      return;
    }
    host.onTool(call, "start");
    const tool = byName.get(call.name);
    let content: string;
    let isError = false;
    let media: MediaPart[] | undefined;
    if (!tool) {
      content = `Unknown tool "${call.name}". Available tools: ${[...byName.keys()].join(", ") || "none"}.`;
      isError = true;
    } else if (tool.ownerOnly && !deps.toolContext.senderIsOwner) {
      content = `The ${call.name} tool is restricted to the owner.`;
      isError = true;
    } else {
      try {
        const result = await tool.execute(call.arguments, {
          ...deps.toolContext,
          signal: deps.signal,
          toolCallId: call.id,
        });
        content = result.content;
        isError = result.isError ?? false;
        media = result.media;
      } catch (error) {
        if (deps.signal.aborted) throw error;
        content = `Tool error: ${error instanceof Error ? error.message : String(error)}`;
        isError = true;
      }
    }
    content = boundToolResult(content, deps.maxToolResultChars);
    if (verdict.level === "warning" && verdict.call.id === call.id)
      content += `${LOOP_WARNING_MARKER}${verdict.message}. If this is not making progress, change approach or answer with what you have.]`;
    host.append({
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content,
      isError: isError || undefined,
      ...(media?.length ? { media } : {}),
    });
    host.onTool(call, "end", { isError, preview: content.slice(0, 200) });
  }
}

export function boundToolResult(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  const omitted = content.length - maxChars;
  return `${content.slice(0, maxChars)}\n…[tool output truncated: ${omitted} more characters]`;
}

/** Pairs every unanswered tool call of an interrupted run with a result, so the transcript stays valid. */
export function closeDanglingToolCalls(host: Pick<RunHost, "runMessages" | "append">): void {
  for (const call of pendingToolCalls(host.runMessages())) {
    host.append({
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: ABORTED_TOOL_RESULT,
      isError: true,
    });
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new ModelError("aborted", "run aborted");
}
