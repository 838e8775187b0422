/**
 * The per-isolate gate in front of one Postgres server: a bound on open connections (a burst of
 * sessions waits its turn instead of opening more sockets than the server takes) and an outage
 * breaker (once a connection fails, everything fails fast without a socket until a backoff has
 * passed, then one probe tries again). An outage is logged when it starts, at most every few
 * minutes while it lasts, and when it ends — a few lines, however many sessions are waiting.
 */
import { describeError } from "../core/describe-error.ts";
import { TransientError } from "../core/errors.ts";

export interface GateLimits {
  maxConnections: number;
  outageBackoffMaxMs: number;
  /**
   * A slot whose holder has not touched it for this long is presumed abandoned (its Durable Object
   * was reset or evicted mid-pass, so `release` will never run) and is given to the next caller.
   */
  leaseMs: number;
}

/** Postgres is known to be unreachable; try again at `retryAt` (epoch ms). Already logged. */
export class PostgresUnavailableError extends TransientError {
  constructor(
    readonly retryAt: number,
    options?: { cause?: unknown },
  ) {
    super(`Postgres is unreachable; next attempt after ${new Date(retryAt).toISOString()}`, {
      cause: options?.cause,
      retryAfterMs: Math.max(0, retryAt - Date.now()),
    });
  }
}

export interface Permit {
  /** The holder still uses its slot: renews the lease (and reclaims the slot if it had lapsed). */
  touch(): void;
  release(): void;
}

const FIRST_BACKOFF_MS = 1_000;
const STILL_DOWN_LOG_EVERY_MS = 5 * 60_000;
const WAIT_POLL_MS = 20;
/** A waiter polls every WAIT_POLL_MS; one unseen for this long was abandoned with its caller. */
const ABANDONED_WAITER_MS = 2_000;

type Sleep = (ms: number) => Promise<void>;
const sleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Everything here is a lease, because a caller can vanish without running its `finally`: workerd
 * drops a reset or evicted Durable Object's pending promises, so a slot it held, its place in the
 * queue or the probe it was running would otherwise stay taken for the isolate's life.
 */
export class ConnectionGate {
  /** Slots held, by permit id, with the time each holder last touched its slot. */
  private readonly held = new Map<number, { touchedAt: number; probe: boolean }>();
  private nextPermit = 0;
  /** The callers waiting for a slot, oldest first, with the time each last polled. */
  private readonly queue: Array<{ ticket: number; seenAt: number }> = [];
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

  /** Connections open right now through this gate (live leases). */
  get open(): number {
    return this.held.size;
  }

  /**
   * Waits for a free connection slot, first come first served; throws PostgresUnavailableError
   * while the breaker is open. Waiters poll rather than wait on a promise another caller resolves:
   * the callers are different Durable Objects sharing this isolate, and a promise resolved from
   * another object's context never completes in workerd. `wait` is how a waiter sleeps between
   * polls (tests pass one that never returns, as a reset object's timers never fire).
   */
  async acquire(limits: GateLimits, wait: Sleep = sleep): Promise<Permit> {
    this.reclaimAbandoned(limits);
    this.failFastIfDown();
    const ticket = this.nextTicket++;
    const place = { ticket, seenAt: this.now() };
    this.queue.push(place);
    try {
      for (;;) {
        place.seenAt = this.now();
        this.reclaimAbandoned(limits);
        if (this.held.size + this.queue.indexOf(place) < limits.maxConnections) break;
        await wait(WAIT_POLL_MS);
        this.failFastIfDown();
      }
    } finally {
      const index = this.queue.indexOf(place);
      if (index >= 0) this.queue.splice(index, 1);
    }
    // The first connection after a backoff is the probe; the rest keep failing fast until it answers.
    const probe = this.failures > 0;
    if (probe) this.probing = true;
    const id = this.nextPermit++;
    const lease = { touchedAt: this.now(), probe };
    this.held.set(id, lease);
    let released = false;
    return {
      touch: () => {
        if (released) return;
        lease.touchedAt = this.now();
        // A holder that was only slow gets its slot back (briefly one over the bound, never leaked).
        if (!this.held.has(id)) this.held.set(id, { ...lease, probe: false });
      },
      release: () => {
        if (released) return;
        released = true;
        if (this.held.get(id)?.probe) this.probing = false;
        this.held.delete(id);
      },
    };
  }

  /** Frees the slots and queue places of callers that vanished without giving them back. */
  private reclaimAbandoned(limits: GateLimits): void {
    const now = this.now();
    for (const [id, lease] of this.held) {
      if (now - lease.touchedAt < limits.leaseMs) continue;
      this.held.delete(id);
      if (lease.probe) this.probing = false;
      console.error(
        `${this.name}: reclaimed a connection slot unused for ${Math.round((now - lease.touchedAt) / 1000)} s (its holder was reset or evicted)`,
      );
    }
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (now - this.queue[i]!.seenAt >= ABANDONED_WAITER_MS) this.queue.splice(i, 1);
    }
  }

  /** A connection opened: the outage, if any, is over. */
  succeeded(): void {
    if (this.failures === 0) return;
    const downMs = this.now() - this.outageSince;
    console.log(
      `${this.name} reachable again after ${Math.round(downMs / 1000)} s (${this.failures} failed attempt${this.failures === 1 ? "" : "s"})`,
    );
    this.failures = 0;
    this.openUntil = 0;
    this.lastCause = undefined;
  }

  /** Records a transport failure and returns the error every caller gets for it. */
  failed(cause: unknown, limits: GateLimits): PostgresUnavailableError {
    const now = this.now();
    this.failures++;
    const backoff = Math.min(
      limits.outageBackoffMaxMs,
      FIRST_BACKOFF_MS * 2 ** Math.min(this.failures - 1, 16),
    );
    this.openUntil = now + backoff;
    this.lastCause = cause;
    if (this.failures === 1) {
      this.outageSince = now;
      this.lastLoggedAt = now;
      console.error(
        `${this.name} unreachable (${describeError(cause, { innermost: true })}); database work waits and retries with backoff`,
      );
    } else if (now - this.lastLoggedAt >= STILL_DOWN_LOG_EVERY_MS) {
      this.lastLoggedAt = now;
      console.error(
        `${this.name} still unreachable after ${Math.round((now - this.outageSince) / 1000)} s (${this.failures} attempts; ${describeError(cause, { innermost: true })})`,
      );
    }
    return new PostgresUnavailableError(this.openUntil, { cause });
  }

  private failFastIfDown(): void {
    if (this.failures === 0) return;
    if (this.now() < this.openUntil || this.probing) {
      throw new PostgresUnavailableError(Math.max(this.openUntil, this.now() + FIRST_BACKOFF_MS), {
        cause: this.lastCause,
      });
    }
  }
}
