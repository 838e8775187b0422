import type { BudgetsConfig, ScopeLimits } from "../config/budgets.ts";
import { periodWindow, type BudgetPeriod } from "./budget-periods.ts";

/** One period of one scope with its configured caps, as the budget object checks it. */
export interface BudgetWindow {
  period: BudgetPeriod;
  key: string;
  resetsAt: number;
  usd?: number;
  tokens?: number;
  /** Sandbox command time cap (seconds); only in the windows a sandbox command is checked against. */
  sandboxSeconds?: number;
  warnAt: number;
}

export interface ScopeCheck {
  scope: string;
  windows: BudgetWindow[];
}

export interface CallParties {
  agentId: string;
  sessionKey: string;
  /** `<channel>:<senderId>` of the person the run answers; absent for runs nobody sent (cron, heartbeat). */
  sender?: string;
}

/** The scopes a call counts against, each with the periods that have a cap (none: no check at all). */
export function scopesFor(budgets: BudgetsConfig, parties: CallParties, now: number): ScopeCheck[] {
  const candidates: Array<[string, ScopeLimits | undefined]> = [
    ["global", budgets.global],
    [`agent:${parties.agentId}`, budgets.agents[parties.agentId] ?? budgets.agent],
    [`session:${parties.sessionKey}`, budgets.session],
    ...(parties.sender
      ? ([[`sender:${parties.sender}`, budgets.sender]] as Array<[string, ScopeLimits | undefined]>)
      : []),
  ];
  const checks: ScopeCheck[] = [];
  for (const [scope, limits] of candidates) {
    const windows = windowsFor(limits, budgets, now);
    if (windows.length) checks.push({ scope, windows });
  }
  return checks;
}

export function windowsFor(
  limits: ScopeLimits | undefined,
  budgets: BudgetsConfig,
  now: number,
): BudgetWindow[] {
  if (!limits) return [];
  const windows: BudgetWindow[] = [];
  for (const period of ["day", "month"] as const) {
    const cap = limits[period];
    if (!cap || (cap.usd === undefined && cap.tokens === undefined)) continue;
    windows.push({
      ...periodWindow(period, now, budgets.timeZone),
      usd: cap.usd,
      tokens: cap.tokens,
      warnAt: limits.warnAt ?? budgets.warnAt,
    });
  }
  return windows;
}

/** The configured limits of a named scope (for the admin API, which addresses scopes by name). */
export function limitsForScope(budgets: BudgetsConfig, scope: string): ScopeLimits | undefined {
  if (scope === "global") return budgets.global;
  if (scope.startsWith("agent:"))
    return budgets.agents[scope.slice("agent:".length)] ?? budgets.agent;
  if (scope.startsWith("session:")) return budgets.session;
  if (scope.startsWith("sender:")) return budgets.sender;
  return undefined;
}

/**
 * The scopes a sandbox command counts against (global, the agent, the session), each with the
 * periods that cap sandbox time; the session's day falls back to `budgets.sandboxSecondsPerSessionDay`.
 * Separate from `scopesFor`: a scope with only a sandbox cap must not put a budget check in front
 * of every model call.
 */
export function sandboxScopesFor(
  budgets: BudgetsConfig,
  parties: Pick<CallParties, "agentId" | "sessionKey">,
  now: number,
): ScopeCheck[] {
  const checks: ScopeCheck[] = [];
  for (const scope of ["global", `agent:${parties.agentId}`, `session:${parties.sessionKey}`]) {
    const windows = sandboxWindowsFor(scope, budgets, now);
    if (windows.length) checks.push({ scope, windows });
  }
  return checks;
}

export function sandboxWindowsFor(
  scope: string,
  budgets: BudgetsConfig,
  now: number,
): BudgetWindow[] {
  if (scope.startsWith("sender:")) return [];
  const limits = limitsForScope(budgets, scope);
  const windows: BudgetWindow[] = [];
  for (const period of ["day", "month"] as const) {
    const fallback =
      period === "day" && scope.startsWith("session:") && budgets.sandboxSecondsPerSessionDay > 0
        ? budgets.sandboxSecondsPerSessionDay
        : undefined;
    const cap = limits?.[period]?.sandboxSeconds ?? fallback;
    if (cap === undefined) continue;
    windows.push({
      ...periodWindow(period, now, budgets.timeZone),
      sandboxSeconds: cap,
      warnAt: limits?.warnAt ?? budgets.warnAt,
    });
  }
  return windows;
}

/** Every cap of a scope, model and sandbox, one window per period (the admin API's view). */
export function allWindowsFor(scope: string, budgets: BudgetsConfig, now: number): BudgetWindow[] {
  const windows = windowsFor(limitsForScope(budgets, scope), budgets, now);
  for (const sandbox of sandboxWindowsFor(scope, budgets, now)) {
    const same = windows.find((window) => window.key === sandbox.key);
    if (same) same.sandboxSeconds = sandbox.sandboxSeconds;
    else windows.push(sandbox);
  }
  return windows.sort((a, b) => (a.period === b.period ? 0 : a.period === "day" ? -1 : 1));
}
