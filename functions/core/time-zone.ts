/**
 * Time-zone arithmetic with nothing but `Intl` (a Worker has no zone database of its own and no
 * local zone): what a clock in an IANA zone shows at an instant, and the instant at which it shows
 * a given wall time. Session resets, budget periods, cron schedules and active hours all use these.
 */

/** The fields a clock in some zone shows; `month` counts from 1. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** True for a zone `Intl` knows (`Europe/Berlin`, `UTC`); false for a typo or an abbreviation it refuses. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
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
    if (formatters.size > 64) formatters.clear();
    formatters.set(timeZone, hit);
  }
  return hit;
}

/** What the clock in `timeZone` shows at `instant` (epoch ms). Throws RangeError for an unknown zone. */
export function wallClock(instant: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant)))
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    // Some engines write midnight as 24 even with h23.
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

/** A wall clock as the epoch ms it would be in UTC (the form the arithmetic below works in). */
export function wallClockAsUtc(wall: WallClock): number {
  return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
}

/** How far the clock in `timeZone` is ahead of UTC at `instant`, in ms (positive east of Greenwich). */
export function zoneOffsetMs(instant: number, timeZone: string): number {
  return wallClockAsUtc(wallClock(instant, timeZone)) - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant at which the clock in `timeZone` shows `wall` (a WallClock, or one as UTC epoch ms).
 * Exact away from offset changes. Around one (at most one within a day either side), the offsets
 * before and after it are both tried: a wall time the clock shows twice (fall back) is its first
 * showing; one it skips (inside a spring-forward gap) is read on the offset before the gap, which
 * lands as far past the gap as it was into it (02:30 in a 02:00→03:00 gap is 03:30).
 */
export function zonedTimeToUtc(wall: WallClock | number, timeZone: string): number {
  const target = typeof wall === "number" ? wall : wallClockAsUtc(wall);
  const before = target - zoneOffsetMs(target - DAY_MS, timeZone);
  const after = target - zoneOffsetMs(target + DAY_MS, timeZone);
  if (before === after) return before;
  const second = Math.floor(target / 1000) * 1000;
  const shows = (instant: number) => wallClockAsUtc(wallClock(instant, timeZone)) === second;
  const showing = [before, after].filter(shows);
  return showing.length ? Math.min(...showing) : before;
}

const DAY_MS = 86_400_000;
