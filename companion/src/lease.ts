import * as z from "zod";
import { describeAnswer, type WorkerClient } from "./worker-client.ts";
import { delay, jitteredDelay } from "./backoff.ts";

/**
 * The lease that lets this process run the deployment's connectors (durable-objects/companion.ts on
 * the Worker). acquire() waits while another instance holds it; once held it is renewed every third
 * of its ttl. Two failed renewals in a row (two thirds of the ttl gone) or a refusal count as lost:
 * `onLost` runs — the caller stops every connector — before the Worker could hand the lease to
 * anyone else, so two instances never run one account.
 */
const grantedSchema = z.object({
  epoch: z.number().int().positive(),
  ttlMs: z.number().int().positive(),
});
const refusedSchema = z.object({ holder: z.string(), retryAfterMs: z.number().nonnegative() });

export class LeaseKeeper {
  private held: { epoch: number; ttlMs: number; renewedAt: number } | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private onLost: ((reason: string) => void) | undefined;

  constructor(
    private readonly client: WorkerClient,
    readonly instanceId: string,
    private readonly log: (
      level: "info" | "warn" | "error",
      message: string,
      fields?: Record<string, unknown>,
    ) => void,
  ) {}

  get epoch(): number | undefined {
    return this.held?.epoch;
  }

  /** The instance that held the lease at the last refused acquire (this one is waiting for it). */
  waitingFor: string | undefined;

  /** Resolves with the epoch once held; waits (bounded retries with jitter) while another instance has it. */
  async acquire(
    signal: AbortSignal,
    onLost: (reason: string) => void,
  ): Promise<number | undefined> {
    this.onLost = onLost;
    let attempt = 0;
    let announcedHolder = "";
    while (!signal.aborted) {
      try {
        const answer = await this.client.request(
          "POST",
          "/internal/companion/lease",
          { instanceId: this.instanceId, action: "acquire" },
          signal,
        );
        const granted = answer.status === 200 ? grantedSchema.safeParse(answer.json) : undefined;
        if (granted?.success) {
          this.held = { ...granted.data, renewedAt: Date.now() };
          this.waitingFor = undefined;
          this.scheduleRenew();
          this.log("info", "lease acquired", { epoch: granted.data.epoch });
          return granted.data.epoch;
        }
        const refused = answer.status === 409 ? refusedSchema.safeParse(answer.json) : undefined;
        if (refused?.success) {
          if (refused.data.holder !== announcedHolder)
            this.log("info", "another companion holds the lease; waiting", {
              holder: refused.data.holder,
              retryAfterMs: refused.data.retryAfterMs,
            });
          announcedHolder = refused.data.holder;
          this.waitingFor = refused.data.holder;
          await delay(Math.max(250, refused.data.retryAfterMs) + Math.random() * 500, signal);
          continue;
        }
        this.log("warn", "lease request refused", { reason: describeAnswer(answer) });
      } catch (error) {
        if (signal.aborted) break;
        this.log("warn", "lease request failed", {
          error: error instanceof Error ? error.message : String(error),
        });
      }
      await delay(jitteredDelay(attempt++, 500, 30_000), signal);
    }
    return undefined;
  }

  async release(): Promise<void> {
    clearTimeout(this.renewTimer);
    if (!this.held) return;
    this.held = undefined;
    await this.client
      .request("POST", "/internal/companion/lease", {
        instanceId: this.instanceId,
        action: "release",
      })
      .catch(() => undefined);
  }

  /** The Worker refused a write under our epoch: someone else has the lease. */
  lost(reason: string): void {
    if (!this.held) return;
    clearTimeout(this.renewTimer);
    this.held = undefined;
    this.log("error", "lease lost; stopping connectors", { reason });
    this.onLost?.(reason);
  }

  private scheduleRenew(): void {
    clearTimeout(this.renewTimer);
    if (!this.held) return;
    this.renewTimer = setTimeout(
      () => void this.renew(),
      Math.max(100, Math.floor(this.held.ttlMs / 3)),
    );
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    const held = this.held;
    if (!held) return;
    try {
      const answer = await this.client.request("POST", "/internal/companion/lease", {
        instanceId: this.instanceId,
        action: "renew",
      });
      const granted = answer.status === 200 ? grantedSchema.safeParse(answer.json) : undefined;
      if (this.held !== held) return;
      if (granted?.success && granted.data.epoch === held.epoch) {
        this.held = { ...granted.data, renewedAt: Date.now() };
        return this.scheduleRenew();
      }
      if (answer.status === 409) return this.lost(`renewal refused: ${describeAnswer(answer)}`);
    } catch (error) {
      this.log("warn", "lease renewal failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
    if (this.held !== held) return;
    // Stop before the ttl ends: after that the Worker may give the lease to another instance.
    if (Date.now() - held.renewedAt >= (held.ttlMs * 2) / 3 - 50)
      return this.lost("could not renew the lease in time");
    this.scheduleRenew();
  }
}
