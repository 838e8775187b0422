import { describe, expect, it } from "vitest";
import {
  isTimeZone,
  wallClock,
  zonedTimeToUtc,
  zoneOffsetMs,
} from "../../functions/core/time-zone.ts";
import { lastDailyBoundary } from "../../functions/routing/session-reset.ts";
import { periodWindow } from "../../functions/agent/budget-periods.ts";
import { normalizeSchedule } from "../../functions/automation/schedule.ts";

const at = (iso: string) => Date.parse(iso);

describe("the one time-zone helper", () => {
  it("reads a zone's clock and offset at an instant", () => {
    expect(wallClock(at("2026-07-01T12:34:56Z"), "Europe/Berlin")).toEqual({
      year: 2026,
      month: 7,
      day: 1,
      hour: 14,
      minute: 34,
      second: 56,
    });
    expect(wallClock(at("2026-01-01T04:59:59Z"), "America/New_York").hour).toBe(23);
    expect(zoneOffsetMs(at("2026-01-15T00:00:00Z"), "Asia/Kolkata")).toBe(5.5 * 3_600_000);
    expect(isTimeZone("America/New_York")).toBe(true);
    expect(isTimeZone("Mars/Olympus_Mons")).toBe(false);
  });

  it("turns a wall time into its instant, away from and across offset changes", () => {
    const wall = (iso: string) => at(`${iso}Z`);
    expect(zonedTimeToUtc(wall("2026-07-01T09:00:00"), "America/New_York")).toBe(
      at("2026-07-01T13:00:00Z"),
    );
    // Fall back: 01:30 shows twice; the first showing is the one on daylight time.
    expect(zonedTimeToUtc(wall("2026-11-01T01:30:00"), "America/New_York")).toBe(
      at("2026-11-01T05:30:00Z"),
    );
    expect(zonedTimeToUtc(wall("2026-10-25T02:30:00"), "Europe/Berlin")).toBe(
      at("2026-10-25T00:30:00Z"),
    );
    // Spring forward: 02:30 is skipped; it is read as 03:30 on the new offset, west and east.
    expect(zonedTimeToUtc(wall("2026-03-08T02:30:00"), "America/New_York")).toBe(
      at("2026-03-08T07:30:00Z"),
    );
    expect(zonedTimeToUtc(wall("2026-03-29T02:30:00"), "Europe/Berlin")).toBe(
      at("2026-03-29T01:30:00Z"),
    );
  });

  it("session resets, budget periods and cron times agree on a skipped wall time", () => {
    // A daily reset at 02:00 on the day New York skips 02:00–03:00 happens when the gap ends.
    expect(lastDailyBoundary(at("2026-03-08T12:00:00Z"), 2, "America/New_York")).toBe(
      at("2026-03-08T07:00:00Z"),
    );
    // Santiago skips midnight (00:00 → 01:00 on 2026-09-06): that day starts at 01:00 local.
    expect(periodWindow("day", at("2026-09-05T12:00:00Z"), "America/Santiago").resetsAt).toBe(
      at("2026-09-06T04:00:00Z"),
    );
    const once = { kind: "at", at: "2026-03-29T02:30:00", tz: "Europe/Berlin" } as const;
    expect(normalizeSchedule(once, at("2026-01-01T00:00:00Z"))).toEqual({
      kind: "at",
      atMs: at("2026-03-29T01:30:00Z"),
    });
  });
});
