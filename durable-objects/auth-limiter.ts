import { DurableObject } from "cloudflare:workers";
import { withDb } from "../functions/db/client.ts";
import type { Env } from "./env.ts";
import type { AuthLimiterRpc, AuthLimits, AuthVerdict } from "./rpc.ts";
import { recordAudit } from "../functions/db/audit.ts";

/**
 * Failed gateway-auth attempts of one client address bucket (workers/gateway-auth.ts names one
 * object per bucket). Isolates are many and short-lived, so the count that guards the token lives
 * here, where every isolate sees the same one (DESIGN.md: counters that guard security live in a
 * Durable Object). Its one job: count failures in a window, lock the bucket out, forget it after.
 *
 * The clock is this object's own; the limits come with each call (from `gateway.auth.rateLimit`),
 * so a config change applies to the next attempt without a migration.
 */

interface AttemptState {
  failures: number;
  windowStart: number;
  lockedUntil: number;
  /** When nothing here matters any more (end of the window or of the lockout): the alarm's time. */
  expiresAt: number;
}

const STATE_KEY = "attempts";

export class AuthLimiterDO extends DurableObject<Env> implements AuthLimiterRpc {
  /**
   * The caller presented the right credential. Refused while locked out (so a guesser cannot use
   * the lockout period to test guesses); otherwise the bucket's count is cleared, as in OpenClaw.
   */
  async admit(): Promise<AuthVerdict> {
    const now = Date.now();
    const state = await this.read();
    if (!state) return { locked: false };
    if (state.lockedUntil > now) return lockedFor(state.lockedUntil - now);
    await this.forget();
    return { locked: false };
  }

  /** The caller presented a wrong credential: count it; reaching `maxAttempts` in a window locks the bucket. */
  async fail(
    limits: AuthLimits,
    context?: { bucket: string; path?: string },
  ): Promise<AuthVerdict> {
    const now = Date.now();
    const previous = await this.read();
    if (previous && previous.lockedUntil > now) return lockedFor(previous.lockedUntil - now);
    const fresh = !previous || now - previous.windowStart >= limits.windowMs;
    const state: AttemptState = fresh
      ? { failures: 0, windowStart: now, lockedUntil: 0, expiresAt: 0 }
      : { ...previous };
    state.failures += 1;
    if (state.failures >= limits.maxAttempts) state.lockedUntil = now + limits.lockoutMs;
    state.expiresAt = Math.max(state.windowStart + limits.windowMs, state.lockedUntil);
    await this.ctx.storage.put(STATE_KEY, state);
    // Nothing stays stored past the window or the lockout: the alarm drops the bucket.
    await this.ctx.storage.setAlarm(state.expiresAt);
    if (state.lockedUntil > now) this.auditLockout(state, limits, context);
    return state.lockedUntil > now
      ? { locked: false, retryAfterMs: state.lockedUntil - now }
      : { locked: false };
  }

  /**
   * The failure that started a lockout goes to the audit trail, after the answer (waitUntil): the
   * check never waits on Postgres, and a Postgres outage only loses the row, never the lockout.
   */
  private auditLockout(
    state: AttemptState,
    limits: AuthLimits,
    context?: { bucket: string; path?: string },
  ): void {
    if (!this.env.DATABASE_URL) return;
    const record = {
      actor: context?.bucket ?? null,
      action: "auth.lockout",
      target: "gateway",
      detail: {
        failures: state.failures,
        windowMs: limits.windowMs,
        lockoutMs: limits.lockoutMs,
        until: new Date(state.lockedUntil).toISOString(),
        ...(context?.path ? { path: context.path } : {}),
      },
    };
    this.ctx.waitUntil(withDb(this.env, (db) => recordAudit(db, record)).catch(() => undefined));
  }

  override async alarm(): Promise<void> {
    const state = await this.read();
    if (state && state.expiresAt > Date.now()) {
      await this.ctx.storage.setAlarm(state.expiresAt);
      return;
    }
    await this.forget();
  }

  private async read(): Promise<AttemptState | undefined> {
    return this.ctx.storage.get<AttemptState>(STATE_KEY);
  }

  private async forget(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }
}

function lockedFor(remainingMs: number): AuthVerdict {
  return { locked: true, retryAfterMs: remainingMs };
}
