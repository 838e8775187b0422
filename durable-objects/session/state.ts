import type { Env } from "../env.ts";
import type { RunEvent } from "../session-api.ts";
import { SessionStore } from "./storage.ts";
import { StepProfile } from "./upkeep/step-profile.ts";
import { configFromEnv } from "../../functions/channels/gateway-config.ts";
import type { EdgeclawConfig } from "../../functions/config/schema.ts";
import { ModelError, type Usage } from "../../functions/agent/types.ts";

type Listener = (event: RunEvent) => void;

/** The run this object is executing right now (in memory only: storage holds the durable truth). */
export interface ActiveRun {
  runId: string;
  abort: AbortController;
  /** Inbox events this run answers (its triggers and any steer messages it took in). */
  seqs: Set<number>;
}

/**
 * What every step of a SessionDO shares: its storage, its bindings, the listeners of HTTP callers
 * waiting on an event, and the one active run. Step modules (triage, run, compaction, …) take this
 * instead of the Durable Object itself, so session.ts stays the RPC surface and dispatcher.
 */
export class SessionState {
  readonly store: SessionStore;
  readonly listeners = new Map<number, Set<Listener>>();
  active: ActiveRun | null = null;
  triaging: Promise<void> | null = null;
  /**
   * A run triage began for the message it had just accepted (run/start.ts startTriagedRun), not
   * yet executed by this isolate: the dispatcher runs it as new, not as a resume after a crash.
   */
  begunRun: string | null = null;
  /** The alarm pass in progress in this isolate, if any (the dispatcher in session.ts owns it). */
  pumping: Promise<void> | null = null;
  /** When the alarm pass in progress started: a run yields before it has used runSliceSeconds of it. */
  passStartedAt = 0;
  /** Outbox passes run one after another, never two at once (a chunk must not be sent twice). */
  deliveries: Promise<void> = Promise.resolve();
  /**
   * The last metrics batch this isolate handed to the shard (upkeep/metrics.ts): kept in memory,
   * where a row per flush was a billed write per message; a new isolate starts without it.
   */
  metricsFlushed: { no: number; at: number } | undefined = undefined;

  /** Only with EDGECLAW_STEP_PROFILE=1 (the message-cost bench): time, rows and DO calls per step. */
  readonly profile: StepProfile | undefined;
  private profiledEnv: Env | undefined;

  constructor(
    readonly ctx: DurableObjectState,
    /** Read through the object on every use, so the bindings are always the object's own. */
    private readonly bindings: () => Env,
  ) {
    const profile = bindings().EDGECLAW_STEP_PROFILE === "1" ? new StepProfile() : undefined;
    this.profile = profile;
    this.store = new SessionStore(
      profile
        ? {
            sql: profile.meter(ctx.storage.sql),
            transactionSync: (work) => ctx.storage.transactionSync(work),
          }
        : ctx.storage,
      ctx.storage.sql,
    );
  }

  get env(): Env {
    if (!this.profile) return this.bindings();
    return (this.profiledEnv ??= this.profile.meterEnv(this.bindings()));
  }

  /** Runs one step of the object's work (session.ts), under its label when profiling. */
  step<T>(label: string, work: () => Promise<T>): Promise<T> {
    return this.profile ? this.profile.step(label, work) : work();
  }
  /** The same for a synchronous step: no await is added, profiling or not. */
  stepSync<T>(label: string, work: () => T): T {
    return this.profile ? this.profile.stepSync(label, work) : work();
  }

  get config(): EdgeclawConfig {
    return configFromEnv(this.env);
  }

  subscribe(seq: number, listener: Listener): void {
    let set = this.listeners.get(seq);
    if (!set) this.listeners.set(seq, (set = new Set()));
    set.add(listener);
  }

  emit(seqs: Iterable<number>, event: RunEvent): void {
    for (const seq of seqs) {
      for (const listener of this.listeners.get(seq) ?? []) listener(event);
      if (event.type === "done" || event.type === "error") this.listeners.delete(seq);
    }
  }

  abortActiveRun(reason: string): void {
    this.active?.abort.abort(new ModelError("aborted", reason));
  }
}

export function zeroUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}
