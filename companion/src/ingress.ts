import * as z from "zod";
import type { RawEvent } from "./connector.ts";
import type { Outbox, OutboxRow } from "./outbox.ts";
import { describeAnswer, type WorkerClient } from "./worker-client.ts";
import { delay, jitteredDelay } from "./backoff.ts";

/**
 * Moves outbox rows to the Worker (`POST /internal/companion/events`): one drain loop per account,
 * oldest first, in batches bounded by count and bytes. A row goes only when the Worker answered
 * "stored" for it; "failed" rows stay and are retried with backoff and jitter (network errors,
 * 5xx, 429, 403/404 while the config is being fixed); a permanent failure is dead-lettered so one
 * bad event never blocks its account. submit() resolves when every one of its events left the
 * outbox that way — that is the connector's signal to advance its cursor or ack.
 */
export interface IngressOptions {
  maxBatchEvents: number;
  maxBatchBytes: number;
  retryBaseMs: number;
  retryMaxMs: number;
  log(level: "info" | "warn" | "error", message: string, fields?: Record<string, unknown>): void;
}

const resultsSchema = z.object({
  results: z.array(
    z.object({
      eventId: z.string(),
      status: z.enum(["stored", "failed"]),
      error: z.string().optional(),
      permanent: z.boolean().optional(),
    }),
  ),
});

type Waiter = { resolve: () => void; reject: (error: Error) => void };

export class IngressDispatcher {
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly draining = new Map<string, Promise<void>>();
  private readonly wake = new Map<string, () => void>();
  private readonly controller = new AbortController();
  /** Accounts whose last attempt failed, for status: channel/account → reason. */
  readonly lastErrors = new Map<string, string>();
  stored = 0;

  constructor(
    private readonly outbox: Outbox,
    private readonly client: WorkerClient,
    private readonly options: IngressOptions,
  ) {}

  /** Resends what a previous run left, before any connector starts. */
  resumeLeftovers(): void {
    for (const { channel, accountId } of this.outbox.accountsWithRows())
      this.kick(channel, accountId);
  }

  async submit(channel: string, accountId: string, events: RawEvent[]): Promise<void> {
    if (this.controller.signal.aborted) throw new Error("companion is stopping");
    if (!events.length) return;
    this.outbox.add(channel, accountId, events, Date.now());
    const done = events.map(
      (event) =>
        new Promise<void>((resolve, reject) => {
          const key = waiterKey(channel, accountId, event.eventId);
          // A row that already left (stored by an earlier submit of the same id) has nothing to wait for.
          if (!this.outbox.has(channel, accountId, event.eventId)) return resolve();
          this.waiters.set(key, [...(this.waiters.get(key) ?? []), { resolve, reject }]);
        }),
    );
    this.kick(channel, accountId);
    await Promise.all(done);
  }

  /** Waits until the outbox is empty or `ms` passed (graceful stop). */
  async flush(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    while (this.outbox.size() > 0 && Date.now() < until) await delay(50);
    return this.outbox.size() === 0;
  }

  stop(): void {
    this.controller.abort();
    for (const wake of this.wake.values()) wake();
    for (const [, waiters] of this.waiters)
      for (const waiter of waiters) waiter.reject(new Error("companion is stopping"));
    this.waiters.clear();
  }

  private kick(channel: string, accountId: string): void {
    const key = `${channel}\u0000${accountId}`;
    // A running loop picks new rows up after its current batch (or its backoff: new events must not
    // turn a Worker outage into a retry storm).
    if (this.draining.has(key)) return;
    const loop = this.drain(channel, accountId).finally(() => {
      this.draining.delete(key);
      // Rows added between the loop's last empty read and here would otherwise wait for the next submit.
      if (!this.controller.signal.aborted && this.outbox.pending(channel, accountId, 1).length)
        this.kick(channel, accountId);
    });
    this.draining.set(key, loop);
  }

  private async drain(channel: string, accountId: string): Promise<void> {
    const signal = this.controller.signal;
    const label = `${channel}/${accountId}`;
    let attempt = 0;
    while (!signal.aborted) {
      const batch = this.batch(channel, accountId);
      if (!batch.length) return;
      let retry = false;
      try {
        const answer = await this.client.request(
          "POST",
          "/internal/companion/events",
          {
            channel,
            accountId,
            events: batch.map((row) => ({
              eventId: row.eventId,
              payload: JSON.parse(row.payload) as unknown,
              receivedAt: row.receivedAt,
            })),
          },
          signal,
        );
        const parsed = answer.status === 200 ? resultsSchema.safeParse(answer.json) : undefined;
        if (!parsed?.success) {
          retry = true;
          this.lastErrors.set(label, describeAnswer(answer));
          this.options.log(
            answer.status === 403 || answer.status === 404 ? "error" : "warn",
            `ingress refused a batch for ${label}`,
            { status: answer.status, reason: describeAnswer(answer) },
          );
        } else {
          retry = this.settle(channel, accountId, batch, parsed.data.results);
        }
      } catch (error) {
        if (signal.aborted) return;
        retry = true;
        this.lastErrors.set(label, error instanceof Error ? error.message : String(error));
      }
      if (!retry) {
        attempt = 0;
        this.lastErrors.delete(label);
        continue;
      }
      this.outbox.markAttempt(
        channel,
        accountId,
        batch.map((row) => row.eventId),
      );
      await this.sleepOrWake(
        `${channel}\u0000${accountId}`,
        jitteredDelay(attempt, this.options.retryBaseMs, this.options.retryMaxMs),
      );
      attempt += 1;
    }
  }

  /** Applies per-event answers; true when something is left to retry. */
  private settle(
    channel: string,
    accountId: string,
    batch: OutboxRow[],
    results: z.infer<typeof resultsSchema>["results"],
  ): boolean {
    const byId = new Map(results.map((result) => [result.eventId, result]));
    const stored: string[] = [];
    let retry = false;
    for (const row of batch) {
      const result = byId.get(row.eventId);
      if (result?.status === "stored") stored.push(row.eventId);
      else if (result?.status === "failed" && result.permanent) {
        this.outbox.deadLetter(channel, accountId, row.eventId, result.error ?? "refused");
        this.options.log("error", `event dead-lettered: the Worker can never store it`, {
          channel,
          accountId,
          eventId: row.eventId,
          error: result.error,
        });
        this.release(channel, accountId, row.eventId);
      } else {
        retry = true;
        if (result?.error) this.lastErrors.set(`${channel}/${accountId}`, result.error);
      }
    }
    this.outbox.remove(channel, accountId, stored);
    this.stored += stored.length;
    for (const eventId of stored) this.release(channel, accountId, eventId);
    return retry;
  }

  private release(channel: string, accountId: string, eventId: string): void {
    const key = waiterKey(channel, accountId, eventId);
    for (const waiter of this.waiters.get(key) ?? []) waiter.resolve();
    this.waiters.delete(key);
  }

  private batch(channel: string, accountId: string): OutboxRow[] {
    const rows = this.outbox.pending(channel, accountId, this.options.maxBatchEvents);
    const batch: OutboxRow[] = [];
    let bytes = 0;
    for (const row of rows) {
      const size = Buffer.byteLength(row.payload) + row.eventId.length + 64;
      if (batch.length && bytes + size > this.options.maxBatchBytes) break;
      if (!batch.length && size > this.options.maxBatchBytes) {
        // Alone it is still too large for one request: it can never go, so it must not block the rest.
        this.outbox.deadLetter(
          channel,
          accountId,
          row.eventId,
          `event of ${size} bytes exceeds EDGECLAW_COMPANION_BATCH_MAX_BYTES`,
        );
        this.options.log("error", "event dead-lettered: too large for one request", {
          channel,
          accountId,
          eventId: row.eventId,
          bytes: size,
        });
        this.release(channel, accountId, row.eventId);
        continue;
      }
      batch.push(row);
      bytes += size;
    }
    return batch;
  }

  private async sleepOrWake(key: string, ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake.set(key, done);
    });
    this.wake.delete(key);
  }
}

function waiterKey(channel: string, accountId: string, eventId: string): string {
  return `${channel}\u0000${accountId}\u0000${eventId}`;
}
