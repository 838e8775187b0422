import type { LoopDetectionConfig } from "../config/loop-detection-schema.ts";
import type { Message, ToolCall } from "./types.ts";

/**
 * Tool-loop detection per tools/loop-detection. It reads only the run's own transcript entries, so
 * a run resumed after an eviction judges exactly as the one before it did, and a new run starts
 * with a clean history. Before a batch of tool calls runs, each call is set against the last
 * `historySize` finished calls of this run:
 *   - genericRepeat: the same tool and arguments again, whatever they returned → warning;
 *   - knownPollNoProgress: a polling call (`process` poll/log) whose last results were identical
 *     → warning, then critical;
 *   - pingPong: two calls alternating, each returning what it returned before → warning, then
 *     critical;
 *   - the global circuit breaker: any call whose last results were identical, this often → critical.
 * A warning rides along with the call's result; a critical verdict blocks the whole batch before
 * any of it runs (the first time, the model answers once more; the second time, the run ends).
 */

/** A loop found in a batch: which detector, on which call, how often it repeated, and why. */
export interface LoopAlarm {
  level: "warning" | "critical";
  detector: "genericRepeat" | "knownPollNoProgress" | "pingPong" | "globalCircuitBreaker";
  call: ToolCall;
  count: number;
  message: string;
}

export type LoopVerdict = { level: "none" } | LoopAlarm;

/** The prefix of a tool result that loop detection wrote instead of running the call. */
export const LOOP_BLOCKED_PREFIX = "Blocked by loop detection";
/** Where a warning starts in a tool result it was added to; what follows is not the tool's own output. */
export const LOOP_WARNING_MARKER = "\n\n[loop detection warning: ";

interface Finished {
  name: string;
  args: string;
  result: string;
}

/** Volatile fields a result carries that say nothing about progress (OpenClaw's exec/send hashing). */
const VOLATILE_KEYS = new Set([
  "durationMs",
  "duration",
  "tookMs",
  "elapsedMs",
  "pid",
  "cwd",
  "startedAt",
  "endedAt",
  "fetchedAt",
  "timestamp",
  "ts",
  "messageId",
  "fileId",
]);

/** Stable text for arguments or a result: keys sorted, volatile fields dropped, JSON or not. */
function signature(value: unknown): string {
  if (typeof value === "string") {
    try {
      return signature(JSON.parse(value) as unknown);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, (key, inner: unknown) => {
    if (VOLATILE_KEYS.has(key)) return undefined;
    if (inner && typeof inner === "object" && !Array.isArray(inner))
      return Object.fromEntries(
        Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
      );
    return inner;
  });
}

/** This run's finished tool calls, oldest first; calls loop detection itself blocked do not count. */
function finishedCalls(runMessages: readonly Message[]): Finished[] {
  const results = new Map<string, string>();
  for (const message of runMessages)
    if (message.role === "tool" && !message.content.startsWith(LOOP_BLOCKED_PREFIX))
      results.set(message.toolCallId, withoutWarning(message.content));
  const finished: Finished[] = [];
  for (const message of runMessages) {
    if (message.role !== "assistant") continue;
    for (const call of message.toolCalls ?? []) {
      const result = results.get(call.id);
      if (result !== undefined)
        finished.push({
          name: call.name,
          args: signature(call.arguments),
          result: signature(result),
        });
    }
  }
  return finished;
}

function withoutWarning(content: string): string {
  const at = content.lastIndexOf(LOOP_WARNING_MARKER);
  return at < 0 ? content : content.slice(0, at);
}

/** How many times in a row (newest backwards) `name`+`args` returned the result it returned last. */
function sameResultStreak(history: readonly Finished[], name: string, args: string): number {
  const same = history.filter((entry) => entry.name === name && entry.args === args);
  const last = same.at(-1);
  if (!last) return 0;
  let streak = 0;
  for (let i = same.length - 1; i >= 0 && same[i]!.result === last.result; i--) streak++;
  return streak;
}

/** Length of the A,B,A,B… tail that `next` would extend, counting only unchanged results per side. */
function pingPongLength(
  history: readonly Finished[],
  next: { name: string; args: string },
): number {
  const key = (entry: { name: string; args: string }) => `${entry.name}\u0000${entry.args}`;
  const tail = history.at(-1);
  if (!tail || key(tail) === key(next)) return 0;
  const sides = [key(next), key(tail)];
  const lastResult = new Map<string, string>();
  let length = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const entry = history[i]!;
    if (key(entry) !== sides[(history.length - 1 - i + 1) % 2]) break;
    const seen = lastResult.get(key(entry));
    if (seen !== undefined && seen !== entry.result) break;
    lastResult.set(key(entry), entry.result);
    length++;
  }
  return length >= 3 ? length + 1 : 0;
}

function isPollingCall(call: ToolCall): boolean {
  return (
    call.name === "process" && (call.arguments.action === "poll" || call.arguments.action === "log")
  );
}

/** The strongest verdict over the calls of one batch (critical beats warning beats none). */
export function assessToolBatch(
  runMessages: readonly Message[],
  batch: readonly ToolCall[],
  config: LoopDetectionConfig,
): LoopVerdict {
  if (!config.enabled) return { level: "none" };
  const history = finishedCalls(runMessages).slice(-config.historySize);
  let warning: LoopVerdict = { level: "none" };
  for (const call of batch) {
    const args = signature(call.arguments);
    const streak = sameResultStreak(history, call.name, args);
    const tool = `${call.name}`;
    if (streak + 1 >= config.globalCircuitBreakerThreshold)
      return {
        level: "critical",
        detector: "globalCircuitBreaker",
        call,
        count: streak,
        message: `${tool} was called ${streak} times with the same arguments and returned the same result each time`,
      };
    if (config.detectors.knownPollNoProgress && isPollingCall(call)) {
      const level =
        streak + 1 >= config.criticalThreshold
          ? "critical"
          : streak + 1 >= config.warningThreshold
            ? "warning"
            : undefined;
      if (level === "critical")
        return {
          level,
          detector: "knownPollNoProgress",
          call,
          count: streak,
          message: `${tool} was polled ${streak} times and nothing changed`,
        };
      if (level && warning.level === "none")
        warning = {
          level,
          detector: "knownPollNoProgress",
          call,
          count: streak,
          message: `${tool} was polled ${streak} times and nothing changed; wait for the command to finish instead of polling, or stop it`,
        };
    }
    if (config.detectors.pingPong) {
      const length = pingPongLength(history, { name: call.name, args });
      if (length >= config.criticalThreshold)
        return {
          level: "critical",
          detector: "pingPong",
          call,
          count: length,
          message: `the last ${length} calls alternate between two calls whose results do not change`,
        };
      if (length >= config.warningThreshold && warning.level === "none")
        warning = {
          level: "warning",
          detector: "pingPong",
          call,
          count: length,
          message: `the last ${length} calls alternate between two calls whose results do not change`,
        };
    }
    if (config.detectors.genericRepeat && warning.level === "none") {
      const repeats = history.filter(
        (entry) => entry.name === call.name && entry.args === args,
      ).length;
      if (repeats + 1 >= config.warningThreshold)
        warning = {
          level: "warning",
          detector: "genericRepeat",
          call,
          count: repeats,
          message: `${tool} was already called ${repeats} times with these arguments in this run`,
        };
    }
  }
  return warning;
}

/** How many batches loop detection has blocked in this run (the second one ends it). */
export function blockedBatches(runMessages: readonly Message[]): number {
  let batches = 0;
  let inBlockedBatch = false;
  for (const message of runMessages) {
    if (message.role === "assistant") inBlockedBatch = false;
    if (
      message.role === "tool" &&
      message.content.startsWith(LOOP_BLOCKED_PREFIX) &&
      !inBlockedBatch
    ) {
      batches++;
      inBlockedBatch = true;
    }
  }
  return batches;
}
