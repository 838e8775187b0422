import type { BudgetsConfig, ScopeLimits } from "../config/budgets.ts";
import { periodWindow, type BudgetPeriod } from "./budget-periods.ts";

/** One period of one scope with its configured caps, as the budget object checks it. */
export interface BudgetWindow {
  period: BudgetPeriod;
  key: string;
  resetsAt: number;
  usd?: number;
  tokens?: number;
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
