import { displayTurns } from "./session/outbox/display-log.ts";
import { webMediaLinks } from "./session/run/web-files.ts";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "./env.ts";
import type {
  AcceptResult,
  DeadLetter,
  DeadLetterActionResult,
  EventDecision,
  HistoryEntry,
  ResponsesAnswer,
  ResponsesTurn,
  RoutedEvent,
  SessionRpc,
} from "./session-api.ts";
import {
  discardDeadLetter,
  listDeadLetters,
  retryDeadLetter,
} from "./session/outbox/dead-letter-admin.ts";
import { SessionState, zeroUsage } from "./session/state.ts";
import { deliver } from "./session/outbox/replies.ts";
import { mirror } from "./session/mirror/mirror.ts";
import { prune } from "./session/upkeep/retention.ts";
import { rotateSession } from "./session/lifecycle.ts";
import { retryPending } from "./session/retry.ts";
import { executeRun } from "./session/run/execute.ts";
import { startNextRun } from "./session/run/start.ts";
import { scheduleAlarm } from "./session/schedule.ts";
import { savePendingCaptures } from "./session/run/session-memory.ts";
import { triage } from "./session/inbox/triage-pass.ts";
import { eventDecision } from "./session/inbox/decision.ts";
import { pollBackgroundExecs } from "./session/exec-background.ts";
import { approveExec } from "./session/exec-background.ts";
import { sandboxReport } from "./session/exec-report.ts";
import type { SandboxReport } from "../functions/sandbox/report.ts";
import { withDbBatch } from "../functions/db/client.ts";
import { countSession, flushSessionMetrics } from "./session/upkeep/metrics.ts";
import { exportPassSpans } from "./session/upkeep/telemetry.ts";
import { unfenceForDisplay } from "../functions/agent/untrusted-text.ts";
import { deliverAnnounces } from "./session/subagents/announce.ts";
import { stopSubagentHere } from "./session/subagents/kill.ts";
import { postMessageHere } from "./session/subagents/message.ts";
import type { PostedMessage, SentReply, SubagentAdminRow } from "./session/subagents/shapes.ts";
import { childAdminView, childrenOf } from "./session/subagents/children.ts";
import { expireWaitingRuns } from "./session/responses/client-tools.ts";
import { respond } from "./session/responses/respond.ts";
import { runEventStream } from "./session/run-event-stream.ts";

/**
 * One conversation (agent + session key). Accepts events idempotently and durably, then works
 * through them from its alarm: access and commands (triage), queue modes, the agent run
 * (checkpointed step by step in its SQLite), the outbox of reply chunks, and the Postgres mirror.
 * Only one run is ever active; events that arrive meanwhile are queued, steered in or interrupt it.
 *
 * This file is the RPC surface and the alarm dispatcher only; each step lives in session/.
 */
export class SessionDO extends DurableObject<Env> implements SessionRpc {
  private readonly s: SessionState;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.s = new SessionState(ctx, () => this.env);
  }

  // ---- RPC surface -------------------------------------------------------------------------

  /** Stores the event (idempotent by its dedup key). Durable when this returns. */
  async accept(event: RoutedEvent): Promise<AcceptResult> {
    return { status: this.acceptNow(event) === null ? "duplicate" : "accepted" };
  }

  /**
   * Accepts the event and streams NDJSON RunEvents until the run answering it ends. A duplicate
   * of an answered event replays the recorded answer instead of running again.
   */
  async chat(event: RoutedEvent): Promise<ReadableStream<Uint8Array>> {
    const { readable, write } = runEventStream();
    const { store } = this.s;
    const seq = this.acceptNow(event);
    const row = seq === null ? store.inbox.byKey(event.envelope.dedupKey) : store.inbox.bySeq(seq);
    if (!row) {
      write({
        type: "error",
        code: "duplicate",
        message: "this event was already accepted under another key",
      });
    } else if (row.state === "settled") {
      write({
        type: "done",
        runId: row.runId ?? "",
        text: row.reply ?? "",
        usage: zeroUsage(),
        modelRef: "",
      });
    } else {
      this.s.subscribe(row.seq, write);
      if (this.s.active) write({ type: "queued" });
    }
    return readable;
  }

  /** A /v1/responses turn (responses/respond.ts): previous_response_id checked, then accepted. */
  async respond(turn: ResponsesTurn): Promise<ResponsesAnswer> {
    return respond(this.s, turn, (event, alongside) => this.acceptNow(event, alongside));
  }

  /** The visible conversation of the current session, for the web chat (answers name their model). */
  async history(limit = 200): Promise<HistoryEntry[]> {
    const sessionId = this.s.store.meta.get("sessionId");
    if (!sessionId) return [];
    const entries: HistoryEntry[] = [];
    for (const row of this.s.store.transcript.recent(sessionId, limit * 4)) {
      const m = row.message;
      if (m.role === "user") {
        // An image the operator attached (or any stored media of the turn), as a fresh link.
        const media = await webMediaLinks(
          this.s,
          (m.media ?? []).map((part) => ({ ...part, name: part.name ?? part.kind })),
        );
        entries.push({
          role: "user",
          text: unfenceForDisplay(m.content),
          at: row.createdAt,
          ...(media.length ? { media } : {}),
        });
      } else if (m.role === "assistant" && !m.toolCalls?.length && m.content) {
        const model = row.runId ? this.s.store.runs.get(row.runId)?.modelRef : undefined;
        entries.push({
          role: "assistant",
          text: m.content,
          at: row.createdAt,
          ...(model ? { model } : {}),
        });
      }
    }
    // Command turns and notices (display-log.ts), in time order with the transcript.
    for (const { files, ...turn } of displayTurns(this.s, sessionId)) {
      const media = files ? await webMediaLinks(this.s, files) : [];
      entries.push({ ...turn, ...(media.length ? { media } : {}) });
    }
    entries.sort((a, b) => a.at - b.at);
    return entries.slice(-limit);
  }

  /** Starts a fresh session under the same key (admin API, /new, /reset). */
  async adminReset(): Promise<{ sessionId: string }> {
    this.s.abortActiveRun("session reset");
    const sessionId = rotateSession(this.s);
    await scheduleAlarm(this.s);
    return { sessionId };
  }

  /**
   * What this session gave up on, for operators: reply chunks the outbox could not deliver, and
   * inbound events that failed triage or run setup for good (each told its sender once).
   */
  async deadLetters(): Promise<DeadLetter[]> {
    return listDeadLetters(this.s);
  }

  /** Its sandbox for operators: placement, commands, metered time, the container (exec-report.ts). */
  async sandbox(): Promise<SandboxReport> {
    return sandboxReport(this.s);
  }

  /** An operator's allow-once or deny of a command waiting for approval (exec-background.ts). */
  async decideExec(id: string, decision: "allow-once" | "deny", approver: string): Promise<string> {
    return approveExec(this.s, id, decision, approver);
  }

  /** What this session did with the event a dedup key names (inbox/decision.ts); null when it holds none. */
  async eventDecision(dedupKey: string): Promise<EventDecision | null> {
    return eventDecision(this.s.store.inbox, dedupKey) ?? null;
  }

  /** Sends a dead reply chunk again through the outbox, under its original chunk id (dead-letter-admin.ts). */
  async retryDeadLetter(id: string): Promise<DeadLetterActionResult> {
    const result = retryDeadLetter(this.s, id, Date.now());
    await scheduleAlarm(this.s);
    return result;
  }

  /** Drops a dead letter from the list (an event keeps its dedup tombstone). */
  async discardDeadLetter(id: string): Promise<DeadLetterActionResult> {
    const result = discardDeadLetter(this.s, id);
    await scheduleAlarm(this.s);
    return result;
  }

  /** Its parent stops this sub-agent (/subagents kill, the subagents tool): the report still comes. */
  async stopSubagent(reason: string): Promise<string> {
    return stopSubagentHere(this.s, reason);
  }

  /** Another session's sessions_send, waiting for its reply (subagents/sessions.ts). */
  async sentReply(dedupKey: string): Promise<SentReply | null> {
    const row = this.s.store.inbox.byKeyOrAlias(dedupKey);
    if (!row) return null;
    if (row.deadReason !== null) return { settled: true, failed: row.deadReason };
    return row.state === "settled" ? { settled: true, reply: row.reply ?? "" } : { settled: false };
  }

  /** Its sub-agents for the control page (subagents/children.ts). */
  async subagents(): Promise<SubagentAdminRow[]> {
    return childrenOf(this.s.store).map(childAdminView);
  }

  /** Another session's `message` tool: into this conversation's outbox, once per id (subagents/message.ts). */
  async postMessage(message: PostedMessage) {
    return postMessageHere(this.s, message);
  }

  override async alarm(): Promise<void> {
    // A pass is already running here (this alarm is its watchdog, or work arrived meanwhile): it
    // will re-plan when it ends. Send what is due (command replies during a run) and re-arm.
    if (this.s.pumping) {
      await this.s.step("outbox", () => deliver(this.s));
      await scheduleAlarm(this.s);
      return;
    }
    await this.pump();
  }

  // ---- accept ------------------------------------------------------------------------------

  /** `alongside` is written in the transaction that stores the event (a response's record). */
  private acceptNow(event: RoutedEvent, alongside?: (seq: number) => void): number | null {
    const seq = this.s.stepSync("accept", () => this.acceptStored(event, alongside));
    this.s.profile?.report("accept", event.sessionKey);
    return seq;
  }

  private acceptStored(event: RoutedEvent, alongside?: (seq: number) => void): number | null {
    const { store } = this.s;
    const now = Date.now();
    if (!store.meta.get("sessionKey")) {
      store.meta.set("sessionKey", event.sessionKey);
      store.meta.set("agentId", event.agentId);
    }
    const seq = alongside
      ? this.s.ctx.storage.transactionSync(() => {
          const stored = store.inbox.insert(event, now);
          if (stored !== null) alongside(stored);
          return stored;
        })
      : store.inbox.insert(event, now);
    const channel = event.envelope.channel;
    if (seq === null) {
      countSession(this.s, "edgeclaw_events_duplicate_total", { channel });
      // The count waits for a flush; the alarm plan knows (metricsFlushDueAt).
      void scheduleAlarm(this.s);
      return null;
    }
    countSession(this.s, "edgeclaw_events_accepted_total", { channel });
    if (this.s.active) void triage(this.s);
    void scheduleAlarm(this.s);
    return seq;
  }

  // ---- the dispatcher ----------------------------------------------------------------------

  private pump(): Promise<void> {
    // Started in a microtask so `pumping` is set before the pass runs a single line. One pass
    // shares one Postgres connection (access checks, run setup, tools, mirror, audit).
    this.s.pumping ??= Promise.resolve().then(() => withDbBatch(this.env, () => this.pumpOnce()));
    return this.s.pumping;
  }

  /** One alarm pass. However it ends (even by an exception), the next alarm is planned from storage. */
  private async pumpOnce(): Promise<void> {
    try {
      this.s.passStartedAt = Date.now();
      const s = this.s;
      await pollBackgroundExecs(s);
      s.stepSync("run", () => expireWaitingRuns(s));
      for (let round = 0; round < 1000; round++) {
        await s.step("outbox", () => deliver(s));
        await s.step("triage", () => triage(s));
        if (s.stepSync("run", () => retryPending(s))) break;
        const active = s.store.runs.active();
        // A run triage began this pass (run/start.ts startTriagedRun) is new, not a resume.
        const resumed = active !== undefined && active.runId !== s.begunRun;
        s.begunRun = null;
        const run = active ?? s.stepSync("run", () => startNextRun(s));
        if (!run) break;
        await s.step("run", () => executeRun(s, run, resumed));
        // Parked (checkpoint at the end of its slice, or setup waiting to retry): the next pass
        // continues it, so no single alarm handler nears the platform's wall-time limit.
        if (this.s.store.runs.get(run.runId)?.state === "running") break;
      }
      await s.step("outbox", () => deliver(s));
      // A sub-agent's report goes to its parent until stored there (subagents/announce.ts).
      await s.step("announce", () => deliverAnnounces(s));
      await s.step("memory", () => savePendingCaptures(s));
      await s.step("mirror", () => mirror(s));
      await s.step("metrics", () => flushSessionMetrics(s));
      s.stepSync("telemetry", () => exportPassSpans(s));
      s.stepSync("retention", () => prune(s));
    } finally {
      // What this pass counted and no batch took waits in storage (one row; metrics-store.ts).
      this.s.store.metrics.persist();
      // Cleared before planning, synchronously: any plan made from here on is for after this pass.
      this.s.pumping = null;
      await this.s.step("schedule", () => scheduleAlarm(this.s));
      this.s.profile?.report("alarm", this.s.store.meta.get("sessionKey"));
    }
  }
}
