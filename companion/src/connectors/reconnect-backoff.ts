/**
 * Bounded exponential backoff with full jitter for a connector's reconnect loop (the seed's Socket
 * Mode restart: ~2 s growing to ~30 s). A connection that stayed up `stableMs` starts over from the
 * first step, so one drop after hours of uptime does not wait the maximum.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** Uptime after which the next failure counts as the first again. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialMs: 2_000,
  maxMs: 30_000,
  stableMs: 60_000,
};

export class ReconnectBackoff {
  private attempt = 0;
  private connectedAt: number | undefined;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {}

  /** A connection is up (the platform's hello/READY arrived). */
  connected(now = Date.now()): void {
    this.connectedAt = now;
  }

  /** How long to wait before the next attempt. */
  nextDelayMs(now = Date.now()): number {
    if (this.connectedAt !== undefined && now - this.connectedAt >= this.options.stableMs)
      this.attempt = 0;
    this.connectedAt = undefined;
    const ceiling = Math.min(this.options.maxMs, this.options.initialMs * 2 ** this.attempt);
    this.attempt += 1;
    // Full jitter, but never below half the step: many accounts restarting together spread out
    // without a retry storm at ~0 ms.
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }
}

/** Resolves after `ms`, or early (false) when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
