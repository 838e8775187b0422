import type {
  ChannelAdapter,
  ProgressContext,
  ProgressEvent,
  ProgressState,
  SendContext,
} from "../../../functions/channels/adapter.ts";
import { createLogger } from "../../../functions/logging/logger.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import type { SessionStore } from "../storage.ts";
import { SILENT_REPLY_TOKEN } from "../../../functions/agent/prompt.ts";

/**
 * Forwards run progress to the channel (typing, reactions, streaming previews) one call at a time,
 * coalescing text deltas that arrive while a call is in flight, so a fast model never queues up
 * hundreds of platform edits and a slow platform never slows the model down. Best effort: a
 * failing progress call is logged and the run goes on.
 */
export class ProgressRelay {
  private chain: Promise<void> = Promise.resolve();
  private pendingText = "";
  private latestSoFar = "";
  private textQueued = false;

  constructor(
    private readonly args: {
      adapter: ChannelAdapter | undefined;
      route: ReplyRoute;
      ctx: SendContext;
      store: SessionStore;
      runId: string | null;
    },
  ) {}

  /** The event was accepted (ack reaction). Its state is kept until a run takes the event. */
  async accepted(seq: number): Promise<void> {
    const { adapter } = this.args;
    if (!adapter?.progress) return;
    const state = await this.call(adapter, { type: "accepted" }, {});
    if (state && Object.keys(state).length) this.args.store.meta.setJson(`progress:${seq}`, state);
  }

  event(event: ProgressEvent): void {
    const { adapter } = this.args;
    if (!adapter?.progress || !this.args.runId) return;
    if (event.type === "text-delta") {
      this.pendingText += event.text;
      this.latestSoFar = event.soFar;
      // Held while the answer could still be the silent token: a NO_REPLY run never shows "NO_…".
      if (couldBeSilent(event.soFar)) return;
      if (this.textQueued) return;
      this.textQueued = true;
      this.enqueue(() => {
        const text = this.pendingText;
        this.pendingText = "";
        this.textQueued = false;
        return { type: "text-delta", text, soFar: this.latestSoFar };
      });
      return;
    }
    this.enqueue(() => event);
  }

  /** Sends a last event and waits until every progress call has finished. */
  async settle(event: ProgressEvent): Promise<void> {
    this.event(event);
    await this.chain;
  }

  private enqueue(make: () => ProgressEvent): void {
    const { adapter, store, runId } = this.args;
    if (!adapter || !runId) return;
    this.chain = this.chain.then(async () => {
      const current = store.runs.get(runId)?.progressState ?? {};
      const next = await this.call(adapter, make(), current);
      if (next) store.runs.setProgress(runId, next);
    });
  }

  private async call(
    adapter: ChannelAdapter,
    event: ProgressEvent,
    state: ProgressState,
  ): Promise<ProgressState | undefined> {
    const { store, runId } = this.args;
    const ctx: ProgressContext = runId
      ? { ...this.args.ctx, runId, checkpoint: (next) => store.runs.setProgress(runId, next) }
      : this.args.ctx;
    try {
      return await adapter.progress!(this.args.route, event, state, ctx);
    } catch (error) {
      createLogger(
        this.args.ctx.config,
        this.args.ctx.env as Record<string, unknown>,
        runId ? { runId } : {},
      ).warn(`progress ${event.type} on ${adapter.id} failed`, { error });
      return undefined;
    }
  }
}

function couldBeSilent(soFar: string): boolean {
  const text = soFar.trim().toUpperCase();
  return text.length > 0 && SILENT_REPLY_TOKEN.startsWith(text);
}
