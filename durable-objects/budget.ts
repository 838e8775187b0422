import { DurableObject } from "cloudflare:workers";
import type { BudgetWindow } from "../functions/agent/budget-scopes.ts";
import { migrate, type SchemaMigration } from "./lib/migrate.ts";
import type { Env } from "./env.ts";
import {
  admitSandbox,
  chargeSandbox,
  SANDBOX_RUNS_TABLE,
  sandboxRunningMs,
  sweepSandboxRuns,
} from "./budget-sandbox.ts";
import type {
  BudgetRpc,
  RaiseArgs,
  SandboxAdmitArgs,
  SandboxChargeArgs,
  SandboxVerdict,
  ReserveArgs,
  ReserveVerdict,
  SettleArgs,
  WarnCrossing,
  WindowState,
} from "./rpc.ts";

/**
 * The spend of one budget scope (`global`, `agent:<id>`, `session:<key>`, `sender:<channel>:<id>`):
 * one object per scope, so every isolate and every session sees the same counters (DESIGN.md:
 * counters that guard money live in a Durable Object). Its one job: admit a model call only if its
 * worst case fits under every cap of the scope, hold that worst case as a reservation while the
 * call runs, and settle it with the actual cost afterwards.
 *
 * Atomic by construction: each method runs to completion on synchronous SQLite with no await in
 * between, and a Durable Object handles one such method at a time — so no burst of parallel
 * sessions can reserve the same room twice. Spend can pass a cap only by what calls actually used
 * beyond their reservations (zero while the worst-case estimate holds).
 *
 * The caps come with each call (from config `budgets`, so a config change applies to the next call);
 * what the operator changed at run time (a raised cap, a reset period) is stored here per period.
 * The clock is the caller's `now`, so tests can move it.
 */

type WindowRow = {
  key: string;
  spent_usd: number;
  spent_tokens: number;
  limit_usd: number | null;
  limit_tokens: number | null;
  spent_sandbox_ms: number;
  limit_sandbox_seconds: number | null;
  warned: number;
  alerted: number;
  updated_at: number;
};

/** Period rows not touched for this long are forgotten (a month and a day of slack). */
const FORGET_WINDOWS_AFTER_MS = 62 * 24 * 60 * 60 * 1000;

/** BudgetDO's tables, versioned by the shared migrator (lib/migrate.ts): append a step to change them. */
const BUDGET_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    why: "tables of this object (created with IF NOT EXISTS before versioned migrations)",
    statements: [
      `CREATE TABLE IF NOT EXISTS windows (
      key TEXT PRIMARY KEY, spent_usd REAL NOT NULL DEFAULT 0, spent_tokens INTEGER NOT NULL DEFAULT 0,
      limit_usd REAL, limit_tokens INTEGER, warned INTEGER NOT NULL DEFAULT 0, alerted INTEGER NOT NULL DEFAULT 0,
      updated_at INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS reservations (
      id TEXT PRIMARY KEY, usd REAL NOT NULL, tokens INTEGER NOT NULL, keys TEXT NOT NULL, expires_at INTEGER NOT NULL)`,
    ],
  },
  {
    version: 2,
    why: "sandbox command time per period (budget-sandbox.ts): spent, a raised cap, running commands",
    statements: [
      `ALTER TABLE windows ADD COLUMN spent_sandbox_ms INTEGER NOT NULL DEFAULT 0`,
      `ALTER TABLE windows ADD COLUMN limit_sandbox_seconds INTEGER`,
      SANDBOX_RUNS_TABLE,
    ],
  },
];

export class BudgetDO extends DurableObject<Env> implements BudgetRpc {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, { name: "BudgetDO", migrations: BUDGET_MIGRATIONS });
  }

  /**
   * Holds `usd`/`tokens` under reservation `id` if it fits under every window's cap (spent + held by
   * other calls + this one ≤ cap); otherwise holds nothing and says which cap refused it. The same
   * id reserved twice is one reservation (a retried RPC does not hold twice). `unpriced`: the
   * call's model has no price, so `usd` means nothing — any window with a USD cap (the config's,
   * or one raised here at run time) refuses it; token caps still apply as usual.
   */
  reserve(args: ReserveArgs): ReserveVerdict {
    return this.ctx.storage.transactionSync(() => {
      this.sweep(args.now);
      if (this.sql.exec(`SELECT 1 FROM reservations WHERE id = ?`, args.id).toArray().length)
        return { ok: true } as const;
      for (const window of args.windows) {
        const state = this.windowState(window, args.now);
        if (args.unpriced && state.limitUsd !== undefined)
          return {
            ok: false,
            unpriced: true,
            period: window.period,
            resetsAt: window.resetsAt,
          } as const;
        const refusal = overCap(state, args.usd, args.tokens);
        if (refusal) {
          const row = this.row(window.key, args.now);
          const alert = row.alerted === 0;
          if (alert)
            this.sql.exec(
              `UPDATE windows SET alerted = 1, updated_at = ? WHERE key = ?`,
              args.now,
              window.key,
            );
          return {
            ok: false,
            period: window.period,
            resetsAt: window.resetsAt,
            alert,
            ...refusal,
          } as const;
        }
      }
      this.sql.exec(
        `INSERT INTO reservations(id, usd, tokens, keys, expires_at) VALUES(?, ?, ?, ?, ?)`,
        args.id,
        args.usd,
        args.tokens,
        JSON.stringify(args.windows.map((window) => window.key)),
        args.now + args.ttlMs,
      );
      for (const window of args.windows) this.row(window.key, args.now);
      return { ok: true } as const;
    });
  }

  /**
   * Ends reservation `id`: what the call actually used is added to every window it was held in
   * (charged even if the reservation already expired), and the rest is released. Returns each
   * window whose warning threshold this crossed for the first time in its period.
   */
  settle(args: SettleArgs): WarnCrossing[] {
    return this.ctx.storage.transactionSync(() => {
      this.sql.exec(`DELETE FROM reservations WHERE id = ?`, args.id);
      const crossings: WarnCrossing[] = [];
      for (const window of args.windows) {
        this.row(window.key, args.now);
        this.sql.exec(
          `UPDATE windows SET spent_usd = spent_usd + ?, spent_tokens = spent_tokens + ?, updated_at = ? WHERE key = ?`,
          args.usd,
          args.tokens,
          args.now,
          window.key,
        );
        const state = this.windowState(window, args.now);
        const row = this.row(window.key, args.now);
        if (row.warned) continue;
        const crossing = warnCrossing(state, window.warnAt);
        if (crossing) {
          this.sql.exec(`UPDATE windows SET warned = 1 WHERE key = ?`, window.key);
          crossings.push(crossing);
        }
      }
      this.sweep(args.now);
      return crossings;
    });
  }

  /** The scope's windows as they stand (expired reservations dropped first). */
  state(args: { windows: BudgetWindow[]; now: number }): WindowState[] {
    return this.ctx.storage.transactionSync(() => {
      this.sweep(args.now);
      return args.windows.map((window) => this.windowState(window, args.now));
    });
  }

  /**
   * Admits a sandbox command while the scope's sandbox time (finished plus running) is under every
   * window's cap, and counts it as running until it is charged (budget-sandbox.ts).
   */
  admitSandbox(args: SandboxAdmitArgs): SandboxVerdict {
    return this.ctx.storage.transactionSync(() => {
      this.sweep(args.now);
      return admitSandbox(
        this.sql,
        args,
        (window) =>
          this.sql.exec<WindowRow>(`SELECT * FROM windows WHERE key = ?`, window.key).toArray()[0]
            ?.limit_sandbox_seconds ?? window.sandboxSeconds,
        (key) => this.row(key, args.now),
      );
    });
  }

  /** A command's end: its wall time is added to every window it was admitted in, once. */
  chargeSandbox(args: SandboxChargeArgs): void {
    this.ctx.storage.transactionSync(() => chargeSandbox(this.sql, args));
  }

  /** Sets this period's cap (replacing the config's until the period ends) and clears its alert flags. */
  raise(args: RaiseArgs): WindowState {
    return this.ctx.storage.transactionSync(() => {
      this.row(args.window.key, args.now);
      if (args.usd !== undefined)
        this.sql.exec(`UPDATE windows SET limit_usd = ? WHERE key = ?`, args.usd, args.window.key);
      if (args.tokens !== undefined)
        this.sql.exec(
          `UPDATE windows SET limit_tokens = ? WHERE key = ?`,
          args.tokens,
          args.window.key,
        );
      if (args.sandboxSeconds !== undefined)
        this.sql.exec(
          `UPDATE windows SET limit_sandbox_seconds = ? WHERE key = ?`,
          args.sandboxSeconds,
          args.window.key,
        );
      this.sql.exec(
        `UPDATE windows SET warned = 0, alerted = 0, updated_at = ? WHERE key = ?`,
        args.now,
        args.window.key,
      );
      return this.windowState(args.window, args.now);
    });
  }

  /** Starts this period's count again from zero (calls in flight keep their reservations). */
  reset(args: { window: BudgetWindow; now: number }): WindowState {
    return this.ctx.storage.transactionSync(() => {
      this.row(args.window.key, args.now);
      this.sql.exec(
        `UPDATE windows SET spent_usd = 0, spent_tokens = 0, spent_sandbox_ms = 0, warned = 0, alerted = 0, updated_at = ? WHERE key = ?`,
        args.now,
        args.window.key,
      );
      return this.windowState(args.window, args.now);
    });
  }

  private row(key: string, now: number): WindowRow {
    this.sql.exec(
      `INSERT INTO windows(key, updated_at) VALUES(?, ?) ON CONFLICT(key) DO NOTHING`,
      key,
      now,
    );
    return this.sql.exec<WindowRow>(`SELECT * FROM windows WHERE key = ?`, key).toArray()[0]!;
  }

  private windowState(window: BudgetWindow, now: number): WindowState {
    const row = this.sql
      .exec<WindowRow>(`SELECT * FROM windows WHERE key = ?`, window.key)
      .toArray()[0];
    const held = this.sql
      .exec<{ usd: number | null; tokens: number | null }>(
        `SELECT SUM(usd) AS usd, SUM(tokens) AS tokens FROM reservations WHERE EXISTS (SELECT 1 FROM json_each(reservations.keys) WHERE value = ?)`,
        window.key,
      )
      .toArray()[0];
    const limitUsd = row?.limit_usd ?? window.usd;
    const limitTokens = row?.limit_tokens ?? window.tokens;
    const limitSandboxSeconds = row?.limit_sandbox_seconds ?? window.sandboxSeconds;
    return {
      period: window.period,
      key: window.key,
      resetsAt: window.resetsAt,
      ...(limitUsd !== undefined ? { limitUsd } : {}),
      ...(limitTokens !== undefined ? { limitTokens } : {}),
      spentUsd: row?.spent_usd ?? 0,
      spentTokens: row?.spent_tokens ?? 0,
      reservedUsd: held?.usd ?? 0,
      reservedTokens: held?.tokens ?? 0,
      ...(limitSandboxSeconds !== undefined ? { limitSandboxSeconds } : {}),
      spentSandboxSeconds: (row?.spent_sandbox_ms ?? 0) / 1000,
      runningSandboxSeconds: sandboxRunningMs(this.sql, window.key, now) / 1000,
      raised:
        row !== undefined &&
        (row.limit_usd !== null || row.limit_tokens !== null || row.limit_sandbox_seconds !== null),
    };
  }

  /** Reservations of calls that never settled (their object crashed) stop holding room here. */
  private sweep(now: number): void {
    this.sql.exec(`DELETE FROM reservations WHERE expires_at <= ?`, now);
    sweepSandboxRuns(this.sql, now);
    this.sql.exec(`DELETE FROM windows WHERE updated_at < ?`, now - FORGET_WINDOWS_AFTER_MS);
  }
}

function overCap(
  state: WindowState,
  usd: number,
  tokens: number,
): { unit: "usd" | "tokens"; limit: number; spent: number } | undefined {
  if (state.limitUsd !== undefined && state.spentUsd + state.reservedUsd + usd > state.limitUsd) {
    return { unit: "usd", limit: state.limitUsd, spent: state.spentUsd };
  }
  if (
    state.limitTokens !== undefined &&
    state.spentTokens + state.reservedTokens + tokens > state.limitTokens
  ) {
    return { unit: "tokens", limit: state.limitTokens, spent: state.spentTokens };
  }
  return undefined;
}

function warnCrossing(state: WindowState, warnAt: number): WarnCrossing | undefined {
  const base = { period: state.period, key: state.key };
  if (state.limitUsd !== undefined && state.spentUsd >= warnAt * state.limitUsd)
    return { ...base, unit: "usd", limit: state.limitUsd, spent: state.spentUsd };
  if (state.limitTokens !== undefined && state.spentTokens >= warnAt * state.limitTokens) {
    return { ...base, unit: "tokens", limit: state.limitTokens, spent: state.spentTokens };
  }
  return undefined;
}
