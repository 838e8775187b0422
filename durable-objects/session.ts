import { DurableObject } from "cloudflare:workers";
import type { Env } from "../workers/env.ts";
import type { AcceptResult, RoutedEvent, RunEvent } from "./session-api.ts";
import { SessionStore, TOMBSTONE_MS, type InboxRow, type RunRow } from "./session/storage.ts";
import { deliverDueOutbox } from "./session/outbox.ts";
import { mirrorToPostgres } from "./session/mirror.ts";
import { ProgressRelay } from "./session/progress.ts";
import { triageInbound, type TriageHost } from "./session/triage.ts";
import { prepareRun, type RunPlan } from "./session/run-setup.ts";
import { configFromEnv } from "../functions/config/load.ts";
import type { EdgeclawConfig } from "../functions/config/schema.ts";
import { adapterFor, HTTP_CHANNELS } from "../functions/channels/registry.ts";
import { chunkText } from "../functions/channels/chunk.ts";
import { closeDanglingToolCalls, runAgentLoop, type RunHost } from "../functions/agent/run-loop.ts";
import { ModelError, type Message, type ModelRequest, type ModelResult, type ToolCall } from "../functions/agent/types.ts";
import { queuePolicy } from "./session/queue-policy.ts";
import { recordAuditEvent } from "./session/audit.ts";
import { buildRunDeps, costOfRun, selectionFor } from "./session/run-deps.ts";
import { compactionCut, needsCompaction, summarizeForCompaction } from "../functions/agent/compaction.ts";
import { resolveModel } from "../functions/agent/model-resolve.ts";
import { callModel } from "../functions/agent/model-call.ts";
import type { ChatType } from "../functions/channels/envelope.ts";
import type { CompactResult, SessionControl, SessionSettings, SessionSettingsPatch, SessionStatus } from "../functions/commands/session-control.ts";
import { estimateTokens } from "../functions/agent/compaction.ts";

/** How often a running run pushes its watchdog alarm forward; a dead run resumes this long after. */
const WATCHDOG_MS = 30_000;
/** Tombstone/outbox pruning runs at most this often. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

type Listener = (event: RunEvent) => void;
type CallModel = (request: ModelRequest) => Promise<ModelResult>;

/**
 * One conversation (agent + session key). Accepts events idempotently and durably, then works
 * through them from its alarm: access and commands (triage), queue modes, the agent run
 * (checkpointed step by step in its SQLite), the outbox of reply chunks, and the Postgres mirror.
 * Only one run is ever active; events that arrive meanwhile are queued, steered in or interrupt it.
 */
export class SessionDO extends DurableObject<Env> {
  private readonly store: SessionStore;
  private readonly listeners = new Map<number, Set<Listener>>();
  private active: { runId: string; abort: AbortController; seqs: Set<number> } | null = null;
  private pumping: Promise<void> | null = null;
  private triaging: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new SessionStore(ctx.storage.sql);
  }

  private get config(): EdgeclawConfig {
    return configFromEnv(this.env);
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
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    let closed = false;
    const write = (runEvent: RunEvent) => {
      if (closed) return;
      void writer.write(encoder.encode(`${JSON.stringify(runEvent)}\n`)).catch(() => undefined);
      if (runEvent.type === "done" || runEvent.type === "error") {
        closed = true;
        void writer.close().catch(() => undefined);
      }
    };
    const seq = this.acceptNow(event);
    const row = seq === null ? this.store.inboxByKey(event.envelope.dedupKey) : this.store.inboxBySeq(seq);
    if (!row) {
      write({ type: "error", code: "duplicate", message: "this event was already accepted under another key" });
    } else if (row.state === "settled") {
      write({ type: "done", runId: row.runId ?? "", text: row.reply ?? "", usage: zeroUsage(), modelRef: "" });
    } else {
      this.subscribe(row.seq, write);
      if (this.active) write({ type: "queued" });
    }
    return readable;
  }

  /** The visible conversation of the current session, for the web chat. */
  async history(limit = 200): Promise<Array<{ role: "user" | "assistant"; text: string; at: number }>> {
    const sessionId = this.store.getMeta("sessionId");
    if (!sessionId) return [];
    const entries: Array<{ role: "user" | "assistant"; text: string; at: number }> = [];
    for (const row of this.store.transcript(sessionId, limit * 4)) {
      const m = row.message;
      if (m.role === "user") entries.push({ role: "user", text: m.content, at: row.createdAt });
      else if (m.role === "assistant" && !m.toolCalls?.length && m.content) entries.push({ role: "assistant", text: m.content, at: row.createdAt });
    }
    return entries.slice(-limit);
  }

  /** Starts a fresh session under the same key (admin API, /new, /reset). */
  async adminReset(): Promise<{ sessionId: string }> {
    this.active?.abort.abort(new ModelError("aborted", "session reset"));
    return { sessionId: this.rotateSession() };
  }

  /** Dead-lettered reply chunks, for operators. */
  async deadLetters(): Promise<Array<{ id: string; channel: string; to: string; text: string; error: string | null; attempts: number }>> {
    return this.store.outboxRows("dead").map((row) => ({
      id: row.id,
      channel: row.route.channel,
      to: row.route.to,
      text: row.text,
      error: row.lastError,
      attempts: row.attempts,
    }));
  }

  override async alarm(): Promise<void> {
    await this.pump();
  }

  // ---- accept ------------------------------------------------------------------------------

  private acceptNow(event: RoutedEvent): number | null {
    const now = Date.now();
    if (!this.store.getMeta("sessionKey")) {
      this.store.setMeta("sessionKey", event.sessionKey);
      this.store.setMeta("agentId", event.agentId);
    }
    const seq = this.store.insertInbox(event, now);
    if (seq === null) return null;
    if (this.active) void this.triage();
    void this.ctx.storage.setAlarm(now);
    return seq;
  }

  private subscribe(seq: number, listener: Listener): void {
    let set = this.listeners.get(seq);
    if (!set) this.listeners.set(seq, (set = new Set()));
    set.add(listener);
  }

  private emit(seqs: Iterable<number>, event: RunEvent): void {
    for (const seq of seqs) {
      for (const listener of this.listeners.get(seq) ?? []) listener(event);
      if (event.type === "done" || event.type === "error") this.listeners.delete(seq);
    }
  }

  // ---- the pump ----------------------------------------------------------------------------

  private pump(): Promise<void> {
    this.pumping ??= this.pumpOnce().finally(() => {
      this.pumping = null;
    });
    return this.pumping;
  }

  private async pumpOnce(): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      await this.deliver();
      await this.triage();
      if (this.retryPending()) break;
      const run = this.store.activeRun() ?? this.startNextRun();
      if (!run) break;
      await this.executeRun(run);
    }
    await this.deliver();
    const mirrored = await this.mirror();
    this.prune();
    await this.scheduleAlarm(mirrored);
  }

  private async scheduleAlarm(mirrored: boolean): Promise<void> {
    const now = Date.now();
    const due: number[] = [];
    const outboxAt = this.store.nextOutboxAt();
    if (outboxAt !== undefined) due.push(outboxAt);
    const debounceAt = this.nextDebounceAt();
    if (debounceAt !== undefined) due.push(debounceAt);
    if (!mirrored) due.push(now + 5_000);
    const oldest = this.store.oldestSettledAt();
    // An idle session wakes once more, when its oldest tombstone expires, to clean up — not hourly.
    if (oldest !== undefined) due.push(Math.max(now + PRUNE_EVERY_MS, oldest + TOMBSTONE_MS));
    const retryAt = Number(this.store.getMeta("retryAt") ?? 0);
    if (retryAt) due.push(retryAt);
    else if (this.store.inboxByState("new").length) due.push(now);
    if (due.length) await this.ctx.storage.setAlarm(Math.max(now, Math.min(...due)));
    else await this.ctx.storage.deleteAlarm();
  }

  private prune(): void {
    const now = Date.now();
    const last = Number(this.store.getMeta("prunedAt") ?? 0);
    if (now - last < PRUNE_EVERY_MS) return;
    this.store.pruneInbox(now);
    this.store.pruneOutbox(now);
    // Archived in Postgres and out of the model's context: no reason to keep them here too.
    this.store.pruneTranscript(this.store.getMeta("sessionId"));
    this.store.pruneRuns(this.store.getMeta("sessionId"), now);
    this.store.setMeta("prunedAt", String(now));
  }

  // ---- triage: access, commands, queue placement --------------------------------------------

  private triage(): Promise<void> {
    this.triaging ??= (async () => {
      if (this.retryPending()) return;
      // Re-read after each event: events accepted while one is being triaged join this pass.
      for (let row = this.store.inboxByState("new")[0]; row; row = this.store.inboxByState("new")[0]) {
        try {
          await triageInbound(row, this.triageHost());
          this.clearRetry();
        } catch (error) {
          // Postgres (access store) unreachable or similar: the event stays stored and in order;
          // try again with backoff. Nothing is dropped by an outage.
          this.scheduleRetry(`triage of event ${row.seq}`, error);
          return;
        }
      }
    })().finally(() => {
      this.triaging = null;
    });
    return this.triaging;
  }

  /** A transient failure (Postgres down) parks the pump until `retryAt`; the alarm brings it back. */
  private retryPending(): boolean {
    const retryAt = Number(this.store.getMeta("retryAt") ?? 0);
    return retryAt > Date.now();
  }

  private scheduleRetry(what: string, error: unknown): void {
    const failures = Number(this.store.getMeta("retryFailures") ?? 0) + 1;
    const delay = Math.min(60_000, 1_000 * 2 ** Math.min(failures - 1, 6));
    this.store.setMeta("retryFailures", String(failures));
    this.store.setMeta("retryAt", String(Date.now() + delay));
    console.error(`${what} failed (attempt ${failures}, retrying in ${delay} ms): ${describeError(error)}`);
  }

  private clearRetry(): void {
    if (this.store.getMeta("retryAt") === undefined) return;
    this.store.deleteMeta("retryAt");
    this.store.deleteMeta("retryFailures");
  }

  private triageHost(): TriageHost {
    return {
      env: this.env,
      config: this.config,
      store: this.store,
      activeRun: this.active ? { runId: this.active.runId } : null,
      settings: () => this.settings(),
      control: this.sessionControl(),
      rotateSession: (reason) => {
        console.log(`session ${this.store.getMeta("sessionKey")} auto-reset (${reason})`);
        this.rotateSession();
      },
      abortActiveRun: (reason) => this.active?.abort.abort(new ModelError("aborted", reason)),
      reply: (row, texts, settle) => this.reply(row, texts, settle),
      emit: (seq, event) => this.emit([seq], event),
      progressAccepted: (row) => this.progressRelay(null, row.event.envelope.route).accepted(row.seq),
    };
  }

  /**
   * Answers that need no model (command replies, pairing codes): queued once in the outbox for chat
   * platforms, and streamed to HTTP listeners. `settle` ends the event (no run follows).
   */
  private reply(row: InboxRow, texts: string[], settle: boolean): void {
    const now = Date.now();
    const route = row.event.envelope.route;
    const text = texts.join("\n\n");
    this.ctx.storage.transactionSync(() => {
      if (!HTTP_CHANNELS.has(route.channel)) this.enqueueReply(`notice:${row.seq}`, null, route, text, now);
      if (settle) this.store.settleInbox(row.seq, text, now);
    });
    this.emit([row.seq], { type: "notice", text });
    if (settle) this.emit([row.seq], { type: "done", runId: "", text, usage: zeroUsage(), modelRef: "" });
  }

  /** What slash commands may do to this session (functions/commands). */
  private sessionControl(): SessionControl {
    return {
      status: async () => this.status(),
      newSession: async (options) => {
        this.active?.abort.abort(new ModelError("aborted", "new session"));
        const sessionId = this.rotateSession();
        if (options?.model) this.updateSettings({ modelOverride: options.model });
        return { sessionId };
      },
      reset: async (options) => {
        if (options?.soft) return { sessionId: this.currentSessionId(Date.now()) };
        this.active?.abort.abort(new ModelError("aborted", "session reset"));
        return { sessionId: this.rotateSession() };
      },
      stop: async () => {
        const now = Date.now();
        const queued = this.store.inboxByState("queued");
        for (const row of queued) {
          this.store.settleInbox(row.seq, null, now);
          this.emit([row.seq], { type: "error", code: "stopped", message: "cancelled by /stop" });
        }
        const abortedRun = this.active !== null;
        this.active?.abort.abort(new ModelError("aborted", "stopped by /stop"));
        return { abortedRun, cancelledQueued: queued.length };
      },
      getSettings: async () => this.settings(),
      updateSettings: async (patch) => this.updateSettings(patch),
      compact: async (instructions) => this.compactNow(instructions),
    };
  }

  // ---- runs --------------------------------------------------------------------------------

  private startNextRun(): RunRow | undefined {
    const queued = this.store.inboxByState("queued");
    if (!queued.length) return undefined;
    const now = Date.now();
    const plan = prepareRun({ queued, config: this.config, settings: this.settings(), now });
    if (!plan) return undefined;
    return this.beginRun(plan, now);
  }

  private nextDebounceAt(): number | undefined {
    const queued = this.store.inboxByState("queued");
    if (!queued.length) return undefined;
    const plan = prepareRun({ queued, config: this.config, settings: this.settings(), now: Date.now() });
    const { debounceMs } = queuePolicy(this.config, this.settings(), queued[0]!.event.envelope.channel);
    return plan ? undefined : Math.max(...queued.map((row) => row.receivedAt)) + debounceMs;
  }

  private beginRun(plan: RunPlan, now: number): RunRow {
    const runId = crypto.randomUUID();
    const sessionId = this.currentSessionId(now);
    const history = this.store.takeGroupHistory();
    this.ctx.storage.transactionSync(() => {
      this.store.insertRun({
        runId,
        sessionId,
        state: "running",
        route: plan.route,
        modelRef: null,
        progressState: {},
        options: { model: plan.model, senderIsOwner: plan.senderIsOwner, oneShot: plan.oneShot, triggerSeqs: plan.seqs },
        startedAt: now,
      });
      const text = plan.composeText(history, this.store.getJson<string[]>("droppedSummary"));
      this.store.deleteMeta("droppedSummary");
      this.store.appendTranscript(sessionId, runId, { role: "user", content: text }, now);
      for (const seq of plan.seqs) this.store.setInboxState(seq, "taken", runId, now);
      for (const seq of plan.superseded) this.store.settleInbox(seq, null, now);
      if (plan.isUserMessage) this.store.setMeta("lastInteractionAt", String(now));
    });
    for (const seq of plan.superseded) this.emit([seq], { type: "error", code: "superseded", message: "a newer message replaced this one (queue mode interrupt/drop)" });
    return this.store.getRun(runId)!;
  }

  private async executeRun(run: RunRow): Promise<void> {
    const abort = new AbortController();
    const seqs = new Set(this.store.inboxByRun(run.runId).map((row) => row.seq));
    this.active = { runId: run.runId, abort, seqs };
    const config = this.config;
    const agentId = this.store.getMeta("agentId") ?? "main";
    const timeoutMs = (config.agents.list.find((a) => a.id === agentId)?.timeoutSeconds ?? config.agents.defaults.timeoutSeconds) * 1000;
    const timer = setTimeout(() => abort.abort(new ModelError("timeout", `run timed out after ${timeoutMs / 1000}s (agents.defaults.timeoutSeconds)`)), timeoutMs);
    const relay = this.progressRelay(run, run.route);
    let text = "";
    let lastWatchdog = 0;
    const watchdog = () => {
      const now = Date.now();
      if (now - lastWatchdog < WATCHDOG_MS / 3) return;
      lastWatchdog = now;
      void this.ctx.storage.setAlarm(now + WATCHDOG_MS);
    };
    watchdog();
    this.emit(seqs, { type: "run-started", runId: run.runId });
    relay.event({ type: "run-started" });

    const host: RunHost = {
      messages: () => this.withSummary(run.sessionId, this.store.transcript(run.sessionId).map((row) => row.message)),
      runMessages: () => this.store.runTranscript(run.runId).map((row) => row.message),
      append: (message: Message) => {
        this.store.appendTranscript(run.sessionId, run.runId, message, Date.now());
        watchdog();
      },
      recordUsage: (modelRef, usage) => this.store.addRunUsage(run.runId, modelRef, usage),
      hasSteerMessages: () => this.steerCandidates().length > 0,
      takeSteerMessages: () => this.takeSteer(run.runId),
      onTextDelta: (delta) => {
        text += delta;
        this.emit(this.active?.seqs ?? seqs, { type: "text-delta", text: delta });
        relay.event({ type: "text-delta", text: delta, soFar: text });
      },
      onTool: (call: ToolCall, phase, result) => {
        if (phase === "start") text = "";
        this.emit(this.active?.seqs ?? seqs, { type: "tool", callId: call.id, name: call.name, phase, isError: result?.isError, preview: result?.preview });
        relay.event({ type: "tool", name: call.name, phase });
      },
    };

    let deps: Awaited<ReturnType<typeof buildRunDeps>>;
    try {
      deps = await buildRunDeps({
        env: this.env,
        config,
        agentId,
        sessionKey: this.store.getMeta("sessionKey") ?? "",
        sessionId: run.sessionId,
        route: run.route,
        chatType: this.store.getMeta("chatType") as ChatType | undefined,
        modelOverride: run.options.model,
        senderIsOwner: run.options.senderIsOwner ?? false,
        signal: abort.signal,
        status: async () => ({ ...this.status() }),
        onStreamReset: () => {
          text = "";
          this.emit(this.active?.seqs ?? seqs, { type: "text-reset" });
        },
        onNotice: (notice) => this.emit(this.active?.seqs ?? seqs, { type: "notice", text: notice }),
        toolHasRun: () => this.store.runTranscript(run.runId).some((row) => row.message.role === "tool"),
      });
    } catch (error) {
      // Setup reads the workspace from Postgres: an outage parks the run (still "running", its
      // events still taken) and the alarm resumes it later, instead of failing the user's message.
      clearTimeout(timer);
      this.active = null;
      this.scheduleRetry(`setting up run ${run.runId}`, error);
      return;
    }
    this.clearRetry();

    try {
      await this.compactIfNeeded(run, deps.system, deps.callModel, abort.signal).catch((error) => {
        if (abort.signal.aborted) throw error;
        console.warn("proactive compaction failed; running with the full context", error instanceof Error ? error.message : error);
      });
      const outcome = await runAgentLoop(host, deps);
      await relay.settle({ type: "run-finished" });
      this.finishRun(run, "finished", outcome.finalText, deps.isSilent(outcome.finalText));
    } catch (error) {
      await relay.settle({ type: "run-finished" });
      const reason = abort.signal.aborted ? abort.signal.reason : error;
      closeDanglingToolCalls({
        runMessages: host.runMessages,
        append: host.append,
      });
      if (reason instanceof ModelError && reason.kind === "aborted") {
        this.finishRun(run, "aborted", null, true);
      } else {
        const message = describeRunFailure(reason);
        this.finishRun(run, "failed", message, false, reason instanceof ModelError ? reason.kind : "error");
      }
    } finally {
      clearTimeout(timer);
      this.active = null;
    }
  }

  /** Records the end of a run and its one visible reply, atomically. */
  private finishRun(run: RunRow, state: "finished" | "failed" | "aborted", reply: string | null, silent: boolean, errorCode?: string): void {
    const now = Date.now();
    const seqs = this.store.inboxByRun(run.runId).map((row) => row.seq);
    this.ctx.storage.transactionSync(() => {
      this.store.finishRun(run.runId, state, now);
      if (reply && !silent && !HTTP_CHANNELS.has(run.route.channel)) this.enqueueReply(`run:${run.runId}`, run.runId, run.route, reply, now);
      for (const seq of seqs) this.store.settleInbox(seq, silent ? "" : reply, now);
    });
    const finished = this.store.getRun(run.runId)!;
    if (state === "finished") {
      this.emit(seqs, {
        type: "done",
        runId: run.runId,
        text: silent ? "" : (reply ?? ""),
        modelRef: finished.modelRef ?? "",
        usage: {
          inputTokens: finished.inputTokens,
          outputTokens: finished.outputTokens,
          cacheReadTokens: finished.cacheReadTokens,
          cacheWriteTokens: finished.cacheWriteTokens,
        },
      });
    } else {
      this.emit(seqs, { type: "error", code: errorCode ?? state, message: reply ?? "the run was stopped" });
    }
  }

  private enqueueReply(idPrefix: string, runId: string | null, route: RunRow["route"], text: string, now: number): void {
    const adapter = adapterFor(route.channel);
    const limit = adapter ? adapter.textChunkLimit(this.config, route.accountId) : 4000;
    const chunks = chunkText(text, limit, adapter?.chunkMode?.(this.config, route.accountId) ?? "length");
    chunks.forEach((chunk, index) => {
      this.store.insertOutbox({ id: `${idPrefix}:${index}`, runId, route, text: chunk, chunkIndex: index, chunkCount: chunks.length }, now);
    });
  }

  /** Queued messages a steer-mode run may take in at its next boundary. */
  private steerCandidates(): InboxRow[] {
    return this.store
      .inboxByState("queued")
      .filter((row) => this.queueModeFor(row.event.envelope.channel) === "steer" && row.prepared?.queuedBehindRun);
  }

  private takeSteer(runId: string): string[] {
    const rows = this.steerCandidates();
    const now = Date.now();
    for (const row of rows) {
      this.store.setInboxState(row.seq, "taken", runId, now);
      this.active?.seqs.add(row.seq);
    }
    return rows.map((row) => row.prepared?.text ?? row.event.envelope.text);
  }

  private queueModeFor(channel: string): string {
    return queuePolicy(this.config, this.settings(), channel).mode;
  }

  // ---- session identity and settings --------------------------------------------------------

  private currentSessionId(now: number): string {
    const existing = this.store.getMeta("sessionId");
    if (existing) return existing;
    return this.rotateSession(now);
  }

  /**
   * Starts a new sessionId under the same key (first message, /new, /reset, idle/daily reset): the
   * model then sees an empty transcript. Session settings chosen with /model, /queue, /think are the
   * user's and carry over, as OpenClaw keeps user overrides across resets.
   */
  private rotateSession(now = Date.now()): string {
    const sessionId = crypto.randomUUID();
    this.ctx.storage.transactionSync(() => {
      this.store.setMeta("sessionId", sessionId);
      this.store.setMeta("sessionStartedAt", String(now));
      this.store.deleteMeta("lastInteractionAt");
      this.store.deleteMeta("compactions");
    });
    return sessionId;
  }

  private settings(): SessionSettings {
    return this.store.getJson<SessionSettings>("settings") ?? {};
  }

  /** Applies a patch: `null` clears an override, undefined leaves it alone. */
  private updateSettings(patch: SessionSettingsPatch): SessionSettings {
    const next: Record<string, unknown> = { ...this.settings() };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete next[key];
      else if (value !== undefined) next[key] = value;
    }
    this.store.setJson("settings", next);
    return next as SessionSettings;
  }

  private sessionFacts() {
    const sessionId = this.currentSessionId(Date.now());
    const totals = this.store.sessionTotals(sessionId);
    return {
      sessionKey: this.store.getMeta("sessionKey") ?? "",
      agentId: this.store.getMeta("agentId") ?? "main",
      sessionId,
      sessionStartedAt: Number(this.store.getMeta("sessionStartedAt") ?? Date.now()),
      lastInteractionAt: this.store.getMeta("lastInteractionAt") ? Number(this.store.getMeta("lastInteractionAt")) : null,
      inputTokens: totals.inputTokens,
      outputTokens: totals.outputTokens,
      runs: totals.runs,
      compactions: Number(this.store.getMeta("compactions") ?? 0),
      activeRunId: this.active?.runId ?? null,
      queued: this.store.inboxByState("queued").length,
      settings: this.settings(),
    };
  }

  // ---- compaction ---------------------------------------------------------------------------

  /** Proactive compaction before a run whose prompt would crowd the model's context window. */
  private async compactIfNeeded(run: RunRow, system: string, call: CallModel, signal: AbortSignal): Promise<void> {
    const compaction = this.config.agents.defaults.compaction;
    if (!compaction.enabled) return;
    const rows = this.store.transcript(run.sessionId);
    const messages = this.withSummary(run.sessionId, rows.map((row) => row.message));
    const window = this.contextWindow(run.options.model);
    if (!needsCompaction(messages, system, window, compaction)) return;
    await this.compactRows(run.sessionId, call, undefined, signal);
  }

  /** Summarises everything but the recent tail into the session's summary. */
  private async compactRows(
    sessionId: string,
    call: CallModel,
    instructions: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ compacted: boolean }> {
    const rows = this.store.transcript(sessionId);
    const cut = compactionCut(rows.map((row) => row.message), this.config.agents.defaults.compaction.keepRecentTokens);
    if (cut === 0) return { compacted: false };
    const previous = this.store.getMeta(`summary:${sessionId}`);
    const older = rows.slice(0, cut).map((row) => row.message);
    const { summary } = await summarizeForCompaction(previous ? [{ role: "user", content: previous }, ...older] : older, call, { instructions, signal });
    this.ctx.storage.transactionSync(() => {
      this.store.markCompacted(sessionId, rows[cut]!.seq);
      this.store.setMeta(`summary:${sessionId}`, summary);
      this.store.setMeta("compactions", String(Number(this.store.getMeta("compactions") ?? 0) + 1));
    });
    return { compacted: true };
  }

  /** /compact: compacts now with the session's model selection (not while a run is writing). */
  private async compactNow(instructions?: string): Promise<CompactResult> {
    if (this.active) return { compacted: false, reason: "a run is in progress; try again when it finishes" };
    const sessionId = this.currentSessionId(Date.now());
    const agentId = this.store.getMeta("agentId") ?? "main";
    const selection = selectionFor(this.config, agentId, this.settings().modelOverride);
    const before = estimateTokens(this.withSummary(sessionId, this.store.transcript(sessionId).map((row) => row.message)));
    const outcome = await this.compactRows(sessionId, (request) => callModel({ config: this.config, env: this.env, selection, request }), instructions);
    if (!outcome.compacted) return { compacted: false, reason: "nothing older than the recent context to summarise" };
    const after = estimateTokens(this.withSummary(sessionId, this.store.transcript(sessionId).map((row) => row.message)));
    return { compacted: true, tokensBefore: before, tokensAfter: after };
  }

  /** The session's compaction summary, if any, goes first in what the model sees. */
  private withSummary(sessionId: string, messages: Message[]): Message[] {
    const summary = this.store.getMeta(`summary:${sessionId}`);
    return summary ? [{ role: "user", content: summary }, ...messages] : messages;
  }

  private contextWindow(modelOverride: string | undefined): number {
    const agentId = this.store.getMeta("agentId") ?? "main";
    const ref = selectionFor(this.config, agentId, modelOverride ?? this.settings().modelOverride).primary;
    try {
      return ref ? resolveModel(this.config, this.env, ref).contextWindow : 200_000;
    } catch {
      return 200_000;
    }
  }

  private status(): SessionStatus {
    const facts = this.sessionFacts();
    const settings = facts.settings;
    const selection = selectionFor(this.config, facts.agentId, settings.modelOverride);
    const channel = this.store.getJson<{ channel: string }>("lastRoute")?.channel ?? "";
    const messages = this.withSummary(facts.sessionId, this.store.transcript(facts.sessionId).map((row) => row.message));
    return {
      sessionKey: facts.sessionKey,
      sessionId: facts.sessionId,
      agentId: facts.agentId,
      model: selection.primary ?? "(none configured)",
      modelOverride: settings.modelOverride,
      inputTokens: facts.inputTokens,
      outputTokens: facts.outputTokens,
      contextTokens: estimateTokens(messages),
      contextWindow: this.contextWindow(undefined),
      queue: queuePolicy(this.config, settings, channel),
      thinkLevel: settings.thinkLevel ?? "off",
      verbose: settings.verbose ?? "off",
      sessionStartedAt: facts.sessionStartedAt,
      lastInteractionAt: facts.lastInteractionAt ?? undefined,
      compactions: facts.compactions,
      runActive: facts.activeRunId !== null,
      queuedMessages: facts.queued,
    };
  }

  private costOf(modelRef: string, usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number }): number {
    return costOfRun(this.config, this.env, modelRef, usage);
  }

  // ---- outbox, progress, mirror ---------------------------------------------------------------

  private progressRelay(run: RunRow | null, route: RunRow["route"]): ProgressRelay {
    return new ProgressRelay({
      adapter: HTTP_CHANNELS.has(route.channel) ? undefined : adapterFor(route.channel),
      route,
      ctx: { env: this.env, config: this.config },
      store: this.store,
      runId: run?.runId ?? null,
    });
  }

  private async deliver(): Promise<void> {
    const dead = await deliverDueOutbox({
      store: this.store,
      adapterFor,
      ctx: { env: this.env, config: this.config },
      policy: this.config.messages.outbox,
      progressStateFor: (runId) => (runId ? this.store.getRun(runId)?.progressState : undefined),
      now: Date.now,
    });
    for (const letter of dead) {
      await recordAuditEvent(this.env, "outbox.dead_letter", {
        sessionKey: this.store.getMeta("sessionKey"),
        outboxId: letter.row.id,
        channel: letter.row.route.channel,
        reason: letter.reason,
      }).catch((error) => console.error(`audit write failed: ${describeError(error)}`));
    }
  }

  private async mirror(): Promise<boolean> {
    const sessionId = this.store.getMeta("sessionId");
    if (!sessionId || !this.env.DATABASE_URL) return true;
    const lastRun = this.store.activeRun();
    try {
      return await mirrorToPostgres({
        env: this.env,
        store: this.store,
        batchSize: this.config.messages.mirrorBatchSize,
        costOf: (modelRef, usage) => this.costOf(modelRef, usage),
        facts: {
          sessionKey: this.store.getMeta("sessionKey") ?? "",
          sessionId,
          agentId: this.store.getMeta("agentId") ?? "main",
          channel: lastRun?.route.channel ?? this.store.getJson<{ channel: string }>("lastRoute")?.channel ?? null,
          chatType: this.store.getMeta("chatType") ?? null,
          lastRoute: this.store.getJson("lastRoute") ?? null,
          modelOverride: this.settings().modelOverride ?? null,
          sessionStartedAt: Number(this.store.getMeta("sessionStartedAt") ?? Date.now()),
          lastInteractionAt: this.store.getMeta("lastInteractionAt") ? Number(this.store.getMeta("lastInteractionAt")) : null,
        },
      });
    } catch (error) {
      // Postgres being down never blocks a conversation: the mirror retries on the next alarm.
      // First lines only: a failed query's message carries its parameters (transcript text).
      console.error(`session mirror failed: ${describeError(error)}`);
      return false;
    }
  }
}

/** An error and its causes on one line (drizzle wraps the driver's error as `cause`). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current !== undefined && depth < 4; depth++) {
    parts.push(current instanceof Error ? current.message.split("\n")[0]! : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(" ← ");
}

function zeroUsage() {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

function describeRunFailure(error: unknown): string {
  if (error instanceof ModelError) {
    if (error.kind === "not_configured") return error.message;
    if (error.kind === "timeout") return `⚠️ ${error.message}`;
    return `⚠️ The model request failed (${error.kind}${error.status ? ` ${error.status}` : ""}): ${error.message}`;
  }
  return `⚠️ The agent run failed: ${error instanceof Error ? error.message : String(error)}`;
}
