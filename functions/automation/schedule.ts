import { Cron } from "croner";
import { PermanentError } from "../core/errors.ts";
import { isTimeZone, zonedTimeToUtc } from "../core/time-zone.ts";

/**
 * When a job is due (automation/cron-jobs "Schedule types"): a one-shot `at` (ISO 8601; no offset
 * means UTC, or `tz` when given; or relative like "20m"), a fixed interval `every`, or a 5/6-field
 * cron expression evaluated in an IANA time zone (croner, as OpenClaw: day-of-month and day-of-week
 * both set ⇒ either matches). Pure functions of (schedule, time): the scheduler stores only the
 * result, so a restart recomputes the same moment.
 */
export type StoredSchedule =
  | { kind: "at"; atMs: number }
  | { kind: "every"; everyMs: number; anchorMs: number }
  | { kind: "cron"; expr: string; tz: string };

/** What callers (admin API, CLI, the cron tool) write; normalised by `normalizeSchedule`. */
export type ScheduleInput =
  | { kind: "at"; at: string; tz?: string }
  | { kind: "every"; every: string }
  | { kind: "cron"; expr: string; tz?: string };

/** A schedule that cannot be read (bad duration, expression or zone): the input must change. */
export class ScheduleError extends PermanentError {}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "10m" → 600000. `defaultUnit` applies to a bare number (heartbeat `every` counts minutes). */
export function parseDuration(text: string, defaultUnit: keyof typeof UNIT_MS = "m"): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!match)
    throw new ScheduleError(`invalid duration "${text}" (expected e.g. "30s", "10m", "1h", "1d")`);
  return Math.round(Number(match[1]) * UNIT_MS[(match[2] ?? defaultUnit).toLowerCase()]!);
}

export function normalizeSchedule(input: ScheduleInput, now: number): StoredSchedule {
  switch (input.kind) {
    case "at":
      return { kind: "at", atMs: parseAt(input.at, input.tz, now) };
    case "every": {
      const everyMs = parseDuration(input.every);
      if (everyMs < 1000) throw new ScheduleError("every must be at least 1s");
      return { kind: "every", everyMs, anchorMs: now };
    }
    case "cron": {
      const tz = input.tz ?? "UTC";
      if (!isTimeZone(tz)) throw new ScheduleError(`unknown time zone "${tz}"`);
      const fields = input.expr.trim().split(/\s+/).length;
      if (fields !== 5 && fields !== 6)
        throw new ScheduleError(`cron expression "${input.expr}" must have 5 or 6 fields`);
      try {
        new Cron(input.expr, { timezone: tz, paused: true });
      } catch (error) {
        throw new ScheduleError(
          `invalid cron expression "${input.expr}": ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return { kind: "cron", expr: input.expr.trim(), tz };
    }
  }
}

/**
 * The first due moment strictly after `afterMs`, or null when there is none (a one-shot that has
 * passed). A recurring job that fell behind (the deployment was idle, a long outage) fires once
 * for the missed moments, then keeps its cadence: no catch-up storm.
 */
export function nextDueAfter(schedule: StoredSchedule, afterMs: number): number | null {
  switch (schedule.kind) {
    case "at":
      return schedule.atMs > afterMs ? schedule.atMs : null;
    case "every": {
      const steps = Math.floor((afterMs - schedule.anchorMs) / schedule.everyMs) + 1;
      return schedule.anchorMs + Math.max(1, steps) * schedule.everyMs;
    }
    case "cron": {
      const next = new Cron(schedule.expr, { timezone: schedule.tz, paused: true }).nextRun(
        new Date(afterMs),
      );
      return next ? next.getTime() : null;
    }
  }
}

/** The first due moment of a new (or re-scheduled) job: `at` keeps its moment even if it has passed. */
export function firstDue(schedule: StoredSchedule, now: number): number | null {
  if (schedule.kind === "at") return schedule.atMs;
  return nextDueAfter(schedule, now);
}

export function describeSchedule(schedule: StoredSchedule): string {
  switch (schedule.kind) {
    case "at":
      return `at ${new Date(schedule.atMs).toISOString()}`;
    case "every":
      return `every ${formatDuration(schedule.everyMs)}`;
    case "cron":
      return `cron "${schedule.expr}" (${schedule.tz})`;
  }
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function parseAt(text: string, tz: string | undefined, now: number): number {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/i.test(trimmed)) return now + parseDuration(trimmed);
  const iso =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(
      trimmed,
    );
  if (!iso)
    throw new ScheduleError(
      `invalid time "${text}" (expected ISO 8601 such as 2026-01-02T09:00:00Z, or a delay such as "20m")`,
    );
  const [, y, mo, d, h = "0", mi = "0", s = "0", ms = "0", offset] = iso;
  const wall = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    Number(ms.padEnd(3, "0")),
  );
  if (offset) {
    if (offset.toUpperCase() === "Z") return wall;
    const sign = offset.startsWith("-") ? -1 : 1;
    const digits = offset.slice(1).replace(":", "");
    return wall - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  // No offset: UTC, unless a time zone was given (then the wall time is read in that zone).
  if (!tz) return wall;
  if (!isTimeZone(tz)) throw new ScheduleError(`unknown time zone "${tz}"`);
  return zonedTimeToUtc(wall, tz);
}
