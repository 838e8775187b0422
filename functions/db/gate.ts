/**
 * The per-isolate gate in front of one Postgres server: a bound on open connections (a burst of
 * sessions waits its turn instead of opening more sockets than the server takes) and an outage
 * breaker (once a connection fails, everything fails fast without a socket until a backoff has
 * passed, then one probe tries again). An outage is logged when it starts, at most every few
 * minutes while it lasts, and when it ends — a few lines, however many sessions are waiting.
 */

export interface GateLimits {
  maxConnections: number;
  outageBackoffMaxMs: number;
}

/** Postgres is known to be unreachable; try again at `retryAt` (epoch ms). Already logged. */
export class PostgresUnavailableError extends Error {
  constructor(
    readonly retryAt: number,
    options?: { cause?: unknown },
  ) {
    super(`Postgres is unreachable; next attempt after ${new Date(retryAt).toISOString()}`, options);
    this.name = "PostgresUnavailableError";
  }
}

export interface Permit {
  release(): void;
}

const FIRST_BACKOFF_MS = 1_000;
const STILL_DOWN_LOG_EVERY_MS = 5 * 60_000;
const WAIT_POLL_MS = 20;

export class ConnectionGate {
  private inUse = 0;
  /** Tickets of the callers waiting for a slot, oldest first. */
  private readonly queue: number[] = [];
  private nextTicket = 0;
  private failures = 0;
  private outageSince = 0;
  private openUntil = 0;
  private probing = false;
  private lastLoggedAt = 0;
  private lastCause: unknown;

  constructor(
    private readonly name: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Connections open right now through this gate. */
  get open(): number {
    return this.inUse;
  }

  /**
   * Waits for a free connection slot, first come first served; throws PostgresUnavailableError
   * while the breaker is open. Waiters poll rather than wait on a promise another caller resolves:
   * the callers are different Durable Objects sharing this isolate, and a promise resolved from
   * another object's context never completes in workerd.
   */
  async acquire(limits: GateLimits): Promise<Permit> {
    this.failFastIfDown();
    const ticket = this.nextTicket++;
    this.queue.push(ticket);
    try {
      while (this.inUse + this.queue.indexOf(ticket) >= limits.maxConnections) {
        await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
        this.failFastIfDown();
      }
    } finally {
      this.queue.splice(this.queue.indexOf(ticket), 1);
    }
    this.inUse++;
    // The first connection after a backoff is the probe; the rest keep failing fast until it answers.
    const probe = this.failures > 0;
    if (probe) this.probing = true;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (probe) this.probing = false;
        this.inUse--;
      },
    };
  }

  /** A connection opened: the outage, if any, is over. */
  succeeded(): void {
    if (this.failures === 0) return;
    const downMs = this.now() - this.outageSince;
    console.log(`${this.name} reachable again after ${Math.round(downMs / 1000)} s (${this.failures} failed attempt${this.failures === 1 ? "" : "s"})`);
    this.failures = 0;
    this.openUntil = 0;
    this.lastCause = undefined;
  }

  /** Records a transport failure and returns the error every caller gets for it. */
  failed(cause: unknown, limits: GateLimits): PostgresUnavailableError {
    const now = this.now();
    this.failures++;
    const backoff = Math.min(limits.outageBackoffMaxMs, FIRST_BACKOFF_MS * 2 ** Math.min(this.failures - 1, 16));
    this.openUntil = now + backoff;
    this.lastCause = cause;
    if (this.failures === 1) {
      this.outageSince = now;
      this.lastLoggedAt = now;
      console.error(`${this.name} unreachable (${describeCause(cause)}); database work waits and retries with backoff`);
    } else if (now - this.lastLoggedAt >= STILL_DOWN_LOG_EVERY_MS) {
      this.lastLoggedAt = now;
      console.error(`${this.name} still unreachable after ${Math.round((now - this.outageSince) / 1000)} s (${this.failures} attempts; ${describeCause(cause)})`);
    }
    return new PostgresUnavailableError(this.openUntil, { cause });
  }

  private failFastIfDown(): void {
    if (this.failures === 0) return;
    if (this.now() < this.openUntil || this.probing) {
      throw new PostgresUnavailableError(Math.max(this.openUntil, this.now() + FIRST_BACKOFF_MS), { cause: this.lastCause });
    }
  }
}

/**
 * The innermost cause's first line: the transport's own words, never a failed query's text and
 * parameters (drizzle puts those in the outer message, and they can hold transcript text).
 */
export function describeCause(error: unknown): string {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth++) current = current.cause;
  const text = current instanceof Error ? current.message : typeof current === "object" && current && "message" in current ? String(current.message) : String(current);
  return text.split("\n")[0]!.slice(0, 200);
}
