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

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let hit = formatters.get(timeZone);
  if (!hit) {
    hit = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, hit);
  }
  return hit;
}

/** Wall-clock fields of `at` in `timeZone`. */
function localParts(
  at: number,
  timeZone: string,
): LocalDate & { hour: number; minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(at))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

/** The zone's offset from UTC at `at`, in ms (positive east of Greenwich). */
function offsetMs(at: number, timeZone: string): number {
  const p = localParts(at, timeZone);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** The instant local midnight starts `date` in `timeZone` (two passes settle a DST change). */
function localMidnight(date: LocalDate, timeZone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day);
  let guess = wall - offsetMs(wall, timeZone);
  guess = wall - offsetMs(guess, timeZone);
  return guess;
}

const pad = (value: number) => String(value).padStart(2, "0");

export function periodWindow(period: BudgetPeriod, now: number, timeZone: string): PeriodWindow {
  const today = localParts(now, timeZone);
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
