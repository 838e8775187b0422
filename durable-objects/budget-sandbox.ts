import type { BudgetWindow } from "../functions/agent/budget-scopes.ts";
import type { SandboxAdmitArgs, SandboxChargeArgs, SandboxVerdict } from "./rpc.ts";

/**
 * The sandbox-time half of one budget scope's counters (the BudgetDO, budget.ts, calls these inside
 * its transactions). Sandbox time cannot be reserved ahead as a model call's worst case can (a
 * command's length is unknown), so a command is admitted while the scope's time so far is under the
 * cap, and held as a run: a running command counts the time it has run until its end is charged
 * (a burst of parallel commands sees each other's time grow). The charge is idempotent by exec id,
 * and a run whose end never arrives (its session crashed before it could charge) is charged its
 * whole bound when that passes: fail closed, never free.
 */

/** How long a charged run is remembered (so a late, repeated charge adds nothing). */
const REMEMBER_CHARGED_MS = 3 * 24 * 3_600_000;

interface RunRow {
  id: string;
  keys: string;
  started_at: number;
  expires_at: number;
  charged_ms: number | null;
  [column: string]: SqlStorageValue;
}

export const SANDBOX_RUNS_TABLE = `CREATE TABLE sandbox_runs (
  id TEXT PRIMARY KEY, keys TEXT NOT NULL, started_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL, charged_ms INTEGER)`;

/** Finished time plus what the scope's running commands have used so far, in ms. */
export function sandboxUsedMs(sql: SqlStorage, key: string, now: number): number {
  const spent =
    sql
      .exec<{ ms: number }>(`SELECT spent_sandbox_ms AS ms FROM windows WHERE key = ?`, key)
      .toArray()[0]?.ms ?? 0;
  return spent + sandboxRunningMs(sql, key, now);
}

export function sandboxRunningMs(sql: SqlStorage, key: string, now: number): number {
  const row = sql
    .exec<{ ms: number | null }>(
      `SELECT SUM(MAX(0, MIN(?, expires_at) - started_at)) AS ms FROM sandbox_runs
       WHERE charged_ms IS NULL AND EXISTS (SELECT 1 FROM json_each(sandbox_runs.keys) WHERE value = ?)`,
      now,
      key,
    )
    .toArray()[0];
  return row?.ms ?? 0;
}

/**
 * Admits command `id` if every window's sandbox time is under its cap, and holds it as a run; a
 * known id is admitted again (a resumed start is not a new command). `limitOf` is the effective
 * cap (a raise stored for the period, else the config's).
 */
export function admitSandbox(
  sql: SqlStorage,
  args: SandboxAdmitArgs,
  limitOf: (window: BudgetWindow) => number | undefined,
  touch: (key: string) => { alerted: number },
): SandboxVerdict {
  if (sql.exec(`SELECT 1 FROM sandbox_runs WHERE id = ?`, args.id).toArray().length)
    return { ok: true };
  for (const window of args.windows) {
    const limit = limitOf(window);
    if (limit === undefined) continue;
    const usedMs = sandboxUsedMs(sql, window.key, args.now);
    if (usedMs < limit * 1000) continue;
    const row = touch(window.key);
    const alert = row.alerted === 0;
    if (alert) sql.exec(`UPDATE windows SET alerted = 1 WHERE key = ?`, window.key);
    return {
      ok: false,
      period: window.period,
      limitSeconds: limit,
      usedSeconds: usedMs / 1000,
      resetsAt: window.resetsAt,
      alert,
    };
  }
  sql.exec(
    `INSERT INTO sandbox_runs(id, keys, started_at, expires_at) VALUES(?, ?, ?, ?)`,
    args.id,
    JSON.stringify(args.windows.map((window) => window.key)),
    args.now,
    Math.max(args.now, args.holdUntil),
  );
  for (const window of args.windows) touch(window.key);
  return { ok: true };
}

/** Charges command `id`'s wall time to the windows it was admitted in, once (0 releases it). */
export function chargeSandbox(sql: SqlStorage, args: SandboxChargeArgs): void {
  const run = sql.exec<RunRow>(`SELECT * FROM sandbox_runs WHERE id = ?`, args.id).toArray()[0];
  if (!run || run.charged_ms !== null) return;
  charge(sql, run, Math.max(0, Math.round(args.ms)), args.now);
}

/** Runs past their bound whose end never came are charged the whole bound; old charged ones go. */
export function sweepSandboxRuns(sql: SqlStorage, now: number): void {
  const lapsed = sql
    .exec<RunRow>(`SELECT * FROM sandbox_runs WHERE charged_ms IS NULL AND expires_at <= ?`, now)
    .toArray();
  for (const run of lapsed) charge(sql, run, run.expires_at - run.started_at, now);
  sql.exec(
    `DELETE FROM sandbox_runs WHERE charged_ms IS NOT NULL AND expires_at < ?`,
    now - REMEMBER_CHARGED_MS,
  );
}

function charge(sql: SqlStorage, run: RunRow, ms: number, now: number): void {
  sql.exec(`UPDATE sandbox_runs SET charged_ms = ? WHERE id = ?`, ms, run.id);
  for (const key of JSON.parse(run.keys) as string[])
    sql.exec(
      `UPDATE windows SET spent_sandbox_ms = spent_sandbox_ms + ?, updated_at = ? WHERE key = ?`,
      ms,
      now,
      key,
    );
}
