import type { Env } from "../env.ts";
import type { RunEvent } from "../session-api.ts";
import { SessionStore } from "./storage.ts";
import { configFromEnv } from "../../functions/config/load.ts";
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
  /** The alarm pass in progress in this isolate, if any (the dispatcher in session.ts owns it). */
  pumping: Promise<void> | null = null;
  /** When the alarm pass in progress started: a run yields before it has used runSliceSeconds of it. */
  passStartedAt = 0;
  /** Outbox passes run one after another, never two at once (a chunk must not be sent twice). */
  deliveries: Promise<void> = Promise.resolve();

  constructor(
    readonly ctx: DurableObjectState,
    /** Read through the object on every use, so the bindings are always the object's own. */
    private readonly bindings: () => Env,
  ) {
    this.store = new SessionStore(ctx.storage);
  }

  get env(): Env {
    return this.bindings();
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
