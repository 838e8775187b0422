import { wallClock, zonedTimeToUtc } from "../core/time-zone.ts";

/**
 * Budget periods: a calendar day and a calendar month in the configured time zone
 * (`budgets.timeZone`, default UTC). Every period has a key (`day:2026-11-30`, `month:2026-11`) that
 * the budget object counts under, and the instant the next one starts. Everything takes `now`, so
 * tests choose the clock.
 */

export type BudgetPeriod = "day" | "month";

export interface PeriodWindow {
  period: BudgetPeriod;
  key: string;
  /** Epoch ms when this period ends and the next one begins (local midnight in the zone). */
  resetsAt: number;
}

interface LocalDate {
  year: number;
  month: number;
  day: number;
}

/** The instant local midnight starts `date` in `timeZone`. */
function localMidnight(date: LocalDate, timeZone: string): number {
  return zonedTimeToUtc({ ...date, hour: 0, minute: 0, second: 0 }, timeZone);
}

const pad = (value: number) => String(value).padStart(2, "0");

export function periodWindow(period: BudgetPeriod, now: number, timeZone: string): PeriodWindow {
  const today = wallClock(now, timeZone);
  if (period === "day") {
    const next = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
    return {
      period,
      key: `day:${today.year}-${pad(today.month)}-${pad(today.day)}`,
      resetsAt: localMidnight(
        { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() },
        timeZone,
      ),
    };
  }
  const next = new Date(Date.UTC(today.year, today.month, 1));
  return {
    period,
    key: `month:${today.year}-${pad(today.month)}`,
    resetsAt: localMidnight(
      { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: 1 },
      timeZone,
    ),
  };
}
