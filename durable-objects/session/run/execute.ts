import type { ChatType } from "../../../functions/core/envelope.ts";
import {
  closeDanglingToolCalls,
  runAgentLoop,
  RunAwaitsClient,
  RunYield,
  type RunHost,
} from "../../../functions/agent/run-loop.ts";
import { ModelError, type Message, type ToolCall } from "../../../functions/agent/types.ts";
import { budgetStopNotice } from "../../../functions/agent/metering.ts";
import { sessionMeter } from "../upkeep/metering.ts";
import { compactIfNeeded } from "./compact.ts";
import { memoryFlushIfDue } from "./memory-flush.ts";
import { progressRelay } from "../outbox/replies.ts";
import { stageReplyFiles } from "./reply-files.ts";
import { finishRun } from "./finish.ts";
import { WEB_CHAT_CHANNEL, webMediaLinks } from "./web-files.ts";
import { queueModeFor } from "../settings.ts";
import { modelMessages } from "./pruning.ts";
import { status } from "../status.ts";
import { deadLetterNotice } from "../outbox/dead-letter.ts";
import { admitRun, markParked, runLimits } from "./bounds.ts";
import { clearRetry, recordFailure } from "../retry.ts";
import { scheduleAlarm, WATCHDOG_MS } from "../schedule.ts";
import { buildRunDeps } from "./deps.ts";
import { sessionAuthProfiles, statusWithAuthProfiles } from "./auth-profiles.ts";
import { describeImagesIfNeeded } from "./describe-images.ts";
import { automationOf, visibleReply } from "../inbox/automation.ts";
import { incomingText, routeTarget } from "./setup.ts";
import { renderIncoming } from "../../../functions/agent/turn-text.ts";
import { newFenceId } from "../../../functions/agent/untrusted-text.ts";
import { runTelemetry } from "../upkeep/telemetry.ts";
import { sessionLog } from "../log.ts";
import { sessionExecHost } from "../exec-step.ts";
import { thinkingLayers } from "./thinking.ts";
import type { InboxRow, RunRow } from "../storage.ts";
import type { SessionState } from "../state.ts";
import { onBehalfOfRun, sessionToolsHost } from "../subagents/host.ts";
import { suspendForClient } from "../responses/client-tools.ts";

/**
 * Runs (or resumes: `resumed` when the run was found "running" in storage) one run, model and tools
 * checkpointed step by step, until it ends or yields at a checkpoint for the next alarm pass.
 */
export async function executeRun(s: SessionState, run: RunRow, resumed: boolean): Promise<void> {
  const config = s.config;
  const agentId = s.store.meta.get("agentId") ?? "main";
  const limits = runLimits(config, agentId, run.options.timeoutSeconds);
  const telemetry = runTelemetry(s, run, agentId);
  const admission = admitRun(s, run, resumed, limits, Date.now());
  if (!admission.go) {
    closeDanglingToolCalls({
      runMessages: () => s.store.transcript.ofRun(run.runId).map((row) => row.message),
      append: (message) => s.store.transcript.append(run.sessionId, run.runId, message, Date.now()),
    });
    finishRun(
      s,
      run,
      "failed",
      admission.notice,
      false,
      admission.code,
      admission.code === "dead_letter" ? admission.reason : undefined,
    );
    telemetry.finished("failed");
    return;
  }
  const abort = new AbortController();
  const seqs = new Set(s.store.inbox.byRun(run.runId).map((row) => row.seq));
  s.active = { runId: run.runId, abort, seqs };
  // The timeout counts from the run's first start, whatever passes and restarts came between.
  // Time spent waiting for a caller's function call outputs is not the run's own.
  const remainingMs = Math.max(
    0,
    run.startedAt + (run.options.waitedMs ?? 0) + limits.timeoutMs - Date.now(),
  );
  const timer = setTimeout(
    () =>
      abort.abort(
        new ModelError(
          "timeout",
          `run timed out after ${limits.timeoutMs / 1000}s (agents.defaults.timeoutSeconds)`,
        ),
      ),
    remainingMs,
  );
  let callsThisPass = 0;
  const relay = progressRelay(s, run, run.route);
  let text = "";
  let lastWatchdog = 0;
  const watchdog = () => {
    const now = Date.now();
    if (now - lastWatchdog < WATCHDOG_MS / 3) return;
    lastWatchdog = now;
    void scheduleAlarm(s);
  };
  watchdog();
  s.emit(seqs, { type: "run-started", runId: run.runId });
  relay.event({ type: "run-started" });

  const host: RunHost = {
    // Pruned (run/pruning.ts) as the session's cache allows; `deps` is set before the loop runs.
    messages: () =>
      modelMessages(s, run.sessionId, {
        system: deps.system,
        modelOverride: run.options.model,
        now: Date.now(),
      }),
    runMessages: () => s.store.transcript.ofRun(run.runId).map((row) => row.message),
    append: (message: Message) => {
      s.store.transcript.append(run.sessionId, run.runId, message, Date.now());
      watchdog();
    },
    recordUsage: (modelRef, usage) => {
      callsThisPass++;
      s.store.runs.addUsage(run.runId, modelRef, usage);
      telemetry.usage(modelRef, usage);
    },
    // Across restarts: a run this isolate did not start is summed from its model_calls rows.
    roundsUsed: () => s.store.runs.get(run.runId)?.steps ?? 0,
    // At least one model call per pass, so a pass that began late still moves the run forward.
    shouldYield: () => callsThisPass > 0 && Date.now() >= s.passStartedAt + limits.sliceMs,
    hasSteerMessages: () => steerCandidates(s, run).length > 0,
    takeSteerMessages: () => takeSteer(s, run),
    onTextDelta: (delta) => {
      text += delta;
      s.emit(s.active?.seqs ?? seqs, { type: "text-delta", text: delta });
      relay.event({ type: "text-delta", text: delta, soFar: text });
    },
    onTool: (call: ToolCall, phase, result) => {
      telemetry.tool(call, phase, result);
      if (phase === "start") text = "";
      s.emit(s.active?.seqs ?? seqs, {
        type: "tool",
        callId: call.id,
        name: call.name,
        phase,
        isError: result?.isError,
        preview: result?.preview,
      });
      relay.event({ type: "tool", name: call.name, phase });
    },
  };

  let deps: Awaited<ReturnType<typeof buildRunDeps>>;
  try {
    deps = await buildRunDeps({
      env: s.env,
      config,
      agentId,
      sessionKey: s.store.meta.get("sessionKey") ?? "",
      sessionId: run.sessionId,
      route: run.route,
      chatType: s.store.meta.get("chatType") as ChatType | undefined,
      modelOverride: run.options.model,
      senderIsOwner: run.options.senderIsOwner ?? false,
      signal: abort.signal,
      status: async () => ({ ...(await statusWithAuthProfiles(s, status(s))) }),
      onStreamReset: () => {
        text = "";
        s.emit(s.active?.seqs ?? seqs, { type: "text-reset" });
      },
      onNotice: (notice) => s.emit(s.active?.seqs ?? seqs, { type: "notice", text: notice }),
      execHost: (mainPrivateSession) =>
        sessionExecHost(s, {
          sessionId: run.sessionId,
          agentId,
          sessionKey: s.store.meta.get("sessionKey") ?? "",
          mainPrivateSession,
        }),
      toolHasRun: () =>
        s.store.transcript.ofRun(run.runId).some((row) => row.message.role === "tool"),
      onAttempt: (report) => telemetry.modelAttempt(report),
      callKind: run.options.callKind ?? "turn",
      meterFor: (kind) =>
        sessionMeter(s, { kind, runId: run.runId, sessionId: run.sessionId, ...runSender(s, run) }),
      startupContext: run.options.startupContext,
      thinking: thinkingLayers(s, run),
      sessionTools: sessionToolsHost(s, run),
      authProfiles: sessionAuthProfiles(s),
    });
  } catch (error) {
    // Setup reads the workspace from Postgres: an outage parks the run (still "running", its
    // events still taken) and the alarm resumes it later, instead of failing the user's message.
    // A permanent failure, or an outage past messages.processing.maxAttempts, ends this run with
    // one notice and dead-letters its events; the session goes on with the next.
    clearTimeout(timer);
    const verdict = recordFailure(s, `setting up run ${run.runId}`, [...seqs], error);
    if (verdict.outcome === "dead") {
      await relay.settle({ type: "run-finished" });
      finishRun(
        s,
        run,
        "failed",
        deadLetterNotice(run.route.channel, verdict.reason),
        false,
        "dead_letter",
        verdict.reason,
      );
      telemetry.finished("failed");
      clearRetry(s);
    } else {
      markParked(s, run.runId);
    }
    s.active = null;
    return;
  }
  clearRetry(s);

  try {
    // A model that takes no images reads a description of them instead (describe-images.ts).
    await describeImagesIfNeeded(s, run, deps, abort.signal);
    // The silent memory flush comes first, while the full context is still there to save from.
    await memoryFlushIfDue(s, run, deps, abort.signal).catch((error) => {
      if (abort.signal.aborted) throw error;
      console.warn(
        "memory flush failed; compacting without it",
        error instanceof Error ? error.message : error,
      );
    });
    await compactIfNeeded(s, run, deps.system, deps.callModelAs("compaction"), abort.signal).catch(
      (error) => {
        if (abort.signal.aborted) throw error;
        sessionLog(s, { runId: run.runId, seqs }).warn(
          "proactive compaction failed; running with the full context",
          { error },
        );
      },
    );
    const outcome = await runAgentLoop(host, { ...deps, clientTools: run.options.clientTools });
    await relay.settle({ type: "run-finished" });
    // A heartbeat that only acknowledges (HEARTBEAT_OK) delivers nothing.
    const visible = visibleReply(automationOf(s, run), outcome.finalText);
    const silent = visible.suppressed || deps.isSilent(visible.text);
    const staged = silent
      ? { text: visible.text, files: [] }
      : await stageReplyFiles(s, run, visible.text);
    // The web chat's files are links it is handed, not outbox rows (web-files.ts).
    const webFiles = run.route.channel === WEB_CHAT_CHANNEL ? staged.files : [];
    const links = await webMediaLinks(s, webFiles);
    finishRun(s, run, "finished", staged.text, silent, undefined, undefined, staged.files, links);
    telemetry.finished("finished");
  } catch (error) {
    if (error instanceof RunYield && !abort.signal.aborted) {
      // Checkpointed between model calls: the next alarm pass continues from the transcript.
      markParked(s, run.runId);
      return;
    }
    if (error instanceof RunAwaitsClient && !abort.signal.aborted) {
      // The caller's function tools were called: the run waits for their outputs (client-tools.ts).
      await relay.settle({ type: "run-finished" });
      suspendForClient(s, run, error.calls, error.text);
      return;
    }
    await relay.settle({ type: "run-finished" });
    const reason = abort.signal.aborted ? abort.signal.reason : error;
    closeDanglingToolCalls({
      runMessages: host.runMessages,
      append: host.append,
    });
    if (reason instanceof ModelError && reason.kind === "aborted") {
      finishRun(s, run, "aborted", null, true);
      telemetry.finished("aborted");
    } else {
      const message = describeRunFailure(reason);
      finishRun(
        s,
        run,
        "failed",
        message,
        false,
        reason instanceof ModelError ? reason.kind : "error",
      );
      telemetry.finished("failed");
    }
  } finally {
    clearTimeout(timer);
    s.active = null;
  }
}

/**
 * Queued messages that may steer this run: only those whose reply goes where this run's reply goes.
 * In a shared session (dmScope "main") another sender's message must not be folded into this turn
 * and answered to this route; it waits for a run of its own.
 */
function steerCandidates(s: SessionState, run: RunRow): InboxRow[] {
  const target = routeTarget(run.route);
  return s.store.inbox
    .byState("queued")
    .filter(
      (row) =>
        queueModeFor(s, row.event.envelope.channel) === "steer" &&
        row.prepared?.queuedBehindRun &&
        routeTarget(row.event.envelope.route) === target,
    );
}

function takeSteer(s: SessionState, run: RunRow): string[] {
  const runId = run.runId;
  const rows = steerCandidates(s, run);
  for (const row of rows) {
    s.store.inbox.take(row.seq, runId);
    s.active?.seqs.add(row.seq);
  }
  // Each steer injection is a user turn of its own, fenced with an id drawn now.
  const fenceId = newFenceId();
  return rows.map((row) => renderIncoming(incomingText(row), fenceId));
}

/** The channel and sender a run answers (its first trigger event), for metering and sender budgets. */
function runSender(s: SessionState, run: RunRow): { channel?: string; senderId?: string } {
  const envelope = s.store.inbox.byRun(run.runId)[0]?.event.envelope;
  // A child (or a report of one) is metered for the person its parent worked for.
  const { onBehalfOf } = onBehalfOfRun(s, run);
  if (onBehalfOf) return onBehalfOf;
  return {
    channel: envelope?.channel ?? run.route.channel,
    ...(envelope?.senderId ? { senderId: envelope.senderId } : {}),
  };
}

function describeRunFailure(error: unknown): string {
  // A budget stop (no room, or no price under a USD cap): one notice for the run (the run ends
  // here, so no retry or resume repeats it).
  const budgetStop = budgetStopNotice(error);
  if (budgetStop) return budgetStop;
  if (error instanceof ModelError) {
    if (error.kind === "not_configured") return error.message;
    if (error.kind === "timeout") return `⚠️ ${error.message}`;
    return `⚠️ The model request failed (${error.kind}${error.status ? ` ${error.status}` : ""}): ${error.message}`;
  }
  return `⚠️ The agent run failed: ${error instanceof Error ? error.message : String(error)}`;
}
