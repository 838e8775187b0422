import type { ConnectorContext } from "../../../../companion/src/connector.ts";

/**
 * What lets a Discord Gateway connection be resumed instead of re-identified: the session id, the
 * resume URL and the highest sequence stored, kept in memory and in companion state (so a restart
 * resumes too). Apart from the connector (connector.ts), which speaks the Gateway protocol, because
 * this is the one place that decides when the sequence may be written: only once its dispatch and
 * every one before it was submitted, coalesced to at most one write per `flushMs`.
 */

const STATE = { session: "session_id", resumeUrl: "resume_gateway_url", seq: "seq" } as const;

export class GatewayResumeState {
  sessionId: string | undefined;
  resumeUrl: string | undefined;
  /** Highest sequence whose dispatch (and all before it) is stored: what a RESUME may start from. */
  storedSeq: number | undefined;
  private flushedSeq: number | undefined;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly accountId: string,
    private readonly flushMs: number,
  ) {}

  /** Reads what an earlier run of the companion stored. */
  async load(ctx: ConnectorContext): Promise<void> {
    this.sessionId = await ctx.state.get(STATE.session);
    this.resumeUrl = await ctx.state.get(STATE.resumeUrl);
    const seq = Number(await ctx.state.get(STATE.seq));
    this.storedSeq = this.flushedSeq = Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
  }

  markStored(ctx: ConnectorContext, seq: number): void {
    if (this.storedSeq !== undefined && seq <= this.storedSeq) return;
    this.storedSeq = seq;
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush(ctx);
    }, this.flushMs);
  }

  async flush(ctx: ConnectorContext): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const seq = this.storedSeq;
    if (seq === undefined || seq === this.flushedSeq) return;
    try {
      await ctx.state.put(STATE.seq, String(seq));
      this.flushedSeq = seq;
    } catch (error) {
      ctx.log("warn", "discord sequence not saved (a restart replays a little more)", {
        account: this.accountId,
        reason: messageOf(error),
      });
    }
  }

  /** READY: a new session, whose sequence starts over. */
  async saveSession(ctx: ConnectorContext): Promise<void> {
    try {
      await ctx.state.put(STATE.session, this.sessionId ?? null);
      await ctx.state.put(STATE.resumeUrl, this.resumeUrl ?? null);
      await ctx.state.put(STATE.seq, null);
      this.flushedSeq = undefined;
    } catch (error) {
      ctx.log("warn", "discord session not saved", {
        account: this.accountId,
        reason: messageOf(error),
      });
    }
  }

  /** The session cannot be resumed (INVALID_SESSION, 4007/4009): the next connection identifies. */
  async forget(ctx: ConnectorContext): Promise<void> {
    this.sessionId = this.resumeUrl = this.storedSeq = this.flushedSeq = undefined;
    await ctx.state.put(STATE.session, null).catch(() => undefined);
    await ctx.state.put(STATE.seq, null).catch(() => undefined);
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
