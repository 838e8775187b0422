import type { AttemptReport } from "../../../functions/agent/model-call.ts";
import type { ToolCall, Usage } from "../../../functions/agent/types.ts";
import {
  exportSpans,
  otlpTarget,
  randomSpanId,
  runTraceIds,
  sampled,
  type SpanRecord,
} from "../../../functions/telemetry/otlp.ts";
import { costOfRun } from "../run/deps.ts";
import { sessionLog } from "../log.ts";
import { countSession, observeSession } from "./metrics.ts";
import type { RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";

/**
 * What one run reports about itself to operators: counters (session/metrics.ts) and, when
 * diagnostics.otel is configured, spans — `openclaw.run` (first start to end, across passes),
 * `openclaw.model.call` per attempt and `openclaw.tool.execution` per tool call, with OpenClaw's span
 * names. Labels and attributes are ids, names, counts and outcomes only — never the text.
 */
export interface RunTelemetry {
  modelAttempt(report: AttemptReport): void;
  usage(modelRef: string, usage: Usage): void;
  tool(call: ToolCall, phase: "start" | "end", result?: { isError?: boolean }): void;
  finished(state: "finished" | "failed" | "aborted"): void;
}

/** Spans waiting for the end of this pass, per object (memory only: telemetry, not state). */
const buffers = new WeakMap<SessionState, { spans: SpanRecord[]; dropped: number }>();

function buffer(s: SessionState, span: SpanRecord): void {
  let entry = buffers.get(s);
  if (!entry) buffers.set(s, (entry = { spans: [], dropped: 0 }));
  if (entry.spans.length >= s.config.diagnostics.otel.maxQueueSpans) entry.dropped++;
  else entry.spans.push(span);
}

export function runTelemetry(s: SessionState, run: RunRow, agentId: string): RunTelemetry {
  const tracing = otlpTarget(s.config, s.env) !== undefined;
  const ids = runTraceIds(run.runId);
  const traced = tracing && sampled(ids.traceId, s.config.diagnostics.otel.sampleRate);
  const toolStarts = new Map<string, number>();
  const child = (
    name: string,
    startMs: number,
    endMs: number,
    attributes: SpanRecord["attributes"],
    error: boolean,
  ) => {
    if (traced)
      buffer(s, {
        traceId: ids.traceId,
        spanId: randomSpanId(),
        parentSpanId: ids.spanId,
        name,
        startMs,
        endMs,
        attributes,
        error,
      });
  };
  return {
    modelAttempt(report) {
      countSession(s, "edgeclaw_model_calls_total", {
        provider: report.providerId,
        outcome: report.outcome,
      });
      observeSession(
        s,
        "edgeclaw_model_call_duration_seconds",
        { provider: report.providerId },
        report.durationMs / 1000,
      );
      child(
        "openclaw.model.call",
        report.startedAt,
        report.startedAt + report.durationMs,
        {
          "gen_ai.system": report.providerId,
          "gen_ai.request.model": report.modelId,
          "gen_ai.usage.input_tokens": report.usage?.inputTokens ?? 0,
          "gen_ai.usage.output_tokens": report.usage?.outputTokens ?? 0,
          "openclaw.outcome": report.outcome,
          "openclaw.run.id": run.runId,
        },
        report.outcome !== "ok",
      );
    },
    usage(modelRef, usage) {
      const model = modelRef || "none";
      const types: Array<[string, number]> = [
        ["input", usage.inputTokens],
        ["output", usage.outputTokens],
        ["cache_read", usage.cacheReadTokens],
        ["cache_write", usage.cacheWriteTokens],
      ];
      for (const [type, tokens] of types)
        if (tokens)
          countSession(s, "edgeclaw_tokens_total", { agent: agentId, model, type }, tokens);
      const spend = costOfRun(s.config, s.env, modelRef, usage);
      if (spend > 0) countSession(s, "edgeclaw_spend_usd_total", { agent: agentId, model }, spend);
    },
    tool(call, phase, result) {
      if (phase === "start") {
        toolStarts.set(call.id, Date.now());
        return;
      }
      const startedAt = toolStarts.get(call.id) ?? Date.now();
      toolStarts.delete(call.id);
      const error = result?.isError === true;
      child(
        "openclaw.tool.execution",
        startedAt,
        Date.now(),
        {
          "openclaw.tool.name": call.name,
          "openclaw.outcome": error ? "error" : "ok",
          "openclaw.run.id": run.runId,
        },
        error,
      );
    },
    finished(state) {
      countSession(s, "edgeclaw_runs_total", { agent: agentId, outcome: state });
      if (traced) {
        buffer(s, {
          ...ids,
          name: "openclaw.run",
          startMs: run.startedAt,
          endMs: Date.now(),
          attributes: {
            "openclaw.run.id": run.runId,
            "openclaw.agent.id": agentId,
            "openclaw.channel": run.route.channel,
            "openclaw.outcome": state,
          },
          error: state === "failed",
        });
      }
    },
  };
}

/** Sends this pass's spans in the background (ctx.waitUntil): the pass never waits on a collector. */
export function exportPassSpans(s: SessionState): void {
  const entry = buffers.get(s);
  if (!entry || (!entry.spans.length && !entry.dropped)) return;
  buffers.delete(s);
  const target = otlpTarget(s.config, s.env);
  if (!target) return;
  const log = sessionLog(s);
  if (entry.dropped)
    log.warn("spans dropped: diagnostics.otel.maxQueueSpans reached in one pass", {
      dropped: entry.dropped,
    });
  s.ctx.waitUntil(
    exportSpans(target, entry.spans).catch((error: unknown) =>
      log.warn("span export failed", { error, spans: entry.spans.length }),
    ),
  );
}
