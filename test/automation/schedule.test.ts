import { describe, expect, it } from "vitest";
import {
  firstDue,
  nextDueAfter,
  normalizeSchedule,
  parseDuration,
  ScheduleError,
} from "../../functions/automation/schedule.ts";
import {
  heartbeatReply,
  isEffectivelyEmpty,
  resolveHeartbeats,
  withinActiveHours,
} from "../../functions/automation/heartbeat.ts";
import { parseConfig } from "../../functions/channels/gateway-config.ts";

const at = (iso: string) => Date.parse(iso);

describe("next due moment", () => {
  it("evaluates cron expressions in the job's time zone, across both DST changes", () => {
    const daily = normalizeSchedule(
      { kind: "cron", expr: "30 7 * * *", tz: "America/New_York" },
      0,
    );
    // EST (UTC-5) before the spring change, EDT (UTC-4) after it.
    expect(nextDueAfter(daily, at("2026-03-07T13:00:00Z"))).toBe(at("2026-03-08T11:30:00Z"));
    expect(nextDueAfter(daily, at("2026-03-08T11:30:00Z"))).toBe(at("2026-03-09T11:30:00Z"));
    expect(nextDueAfter(daily, at("2026-03-06T13:00:00Z"))).toBe(at("2026-03-07T12:30:00Z"));
    // Autumn: back to EST on 1 November 2026.
    expect(nextDueAfter(daily, at("2026-10-31T12:00:00Z"))).toBe(at("2026-11-01T12:30:00Z"));
    const berlin = normalizeSchedule({ kind: "cron", expr: "0 9 * * 1-5", tz: "Europe/Berlin" }, 0);
    // Friday 2026-03-27 09:00 CET = 08:00Z; Monday 2026-03-30 09:00 CEST = 07:00Z.
    expect(nextDueAfter(berlin, at("2026-03-27T07:00:00Z"))).toBe(at("2026-03-27T08:00:00Z"));
    expect(nextDueAfter(berlin, at("2026-03-27T08:00:00Z"))).toBe(at("2026-03-30T07:00:00Z"));
  });

  it("without a time zone reads cron in UTC, and day-of-month OR day-of-week (Vixie)", () => {
    const either = normalizeSchedule({ kind: "cron", expr: "0 9 1 * 1" }, 0);
    // 2026-06-02 is a Tuesday: the next Monday (8 June) comes before 1 July.
    expect(nextDueAfter(either, at("2026-06-02T00:00:00Z"))).toBe(at("2026-06-08T09:00:00Z"));
  });

  it("every keeps its cadence from the anchor and does not replay missed moments", () => {
    const every = normalizeSchedule({ kind: "every", every: "10m" }, at("2026-01-01T00:00:00Z"));
    expect(firstDue(every, at("2026-01-01T00:00:00Z"))).toBe(at("2026-01-01T00:10:00Z"));
    // Idle for hours: the next moment is the next one after now, on the same grid.
    expect(nextDueAfter(every, at("2026-01-01T05:03:00Z"))).toBe(at("2026-01-01T05:10:00Z"));
  });

  it("at: ISO without offset is UTC, with tz is that zone's wall time, relative is from now", () => {
    expect(normalizeSchedule({ kind: "at", at: "2026-07-01T09:00:00" }, 0)).toEqual({
      kind: "at",
      atMs: at("2026-07-01T09:00:00Z"),
    });
    expect(
      normalizeSchedule({ kind: "at", at: "2026-07-01T09:00:00", tz: "America/Los_Angeles" }, 0),
    ).toEqual({ kind: "at", atMs: at("2026-07-01T16:00:00Z") });
    expect(normalizeSchedule({ kind: "at", at: "2026-07-01T09:00:00+02:00" }, 0)).toEqual({
      kind: "at",
      atMs: at("2026-07-01T07:00:00Z"),
    });
    expect(normalizeSchedule({ kind: "at", at: "20m" }, 1000)).toEqual({
      kind: "at",
      atMs: 1000 + 20 * 60_000,
    });
    const oneShot = normalizeSchedule({ kind: "at", at: "2026-07-01T09:00:00Z" }, 0);
    expect(firstDue(oneShot, at("2026-08-01T00:00:00Z"))).toBe(at("2026-07-01T09:00:00Z"));
    expect(nextDueAfter(oneShot, at("2026-07-01T09:00:00Z"))).toBeNull();
  });

  it("refuses what it cannot schedule", () => {
    expect(() => normalizeSchedule({ kind: "cron", expr: "61 * * * *" }, 0)).toThrow(ScheduleError);
    expect(() => normalizeSchedule({ kind: "cron", expr: "* * *" }, 0)).toThrow(ScheduleError);
    expect(() =>
      normalizeSchedule({ kind: "cron", expr: "0 9 * * *", tz: "Mars/Olympus" }, 0),
    ).toThrow(ScheduleError);
    expect(() => normalizeSchedule({ kind: "at", at: "next tuesday" }, 0)).toThrow(ScheduleError);
    expect(() => parseDuration("soon")).toThrow(ScheduleError);
    expect(parseDuration("30")).toBe(30 * 60_000);
  });
});

describe("heartbeat rules", () => {
  it("HEARTBEAT_OK at the start or end is an acknowledgement, dropped up to ackMaxChars", () => {
    expect(heartbeatReply("HEARTBEAT_OK", 300)).toBeNull();
    expect(heartbeatReply("  HEARTBEAT_OK — all quiet.", 300)).toBeNull();
    expect(heartbeatReply("Nothing new. HEARTBEAT_OK", 300)).toBeNull();
    expect(heartbeatReply(`HEARTBEAT_OK ${"x".repeat(301)}`, 300)).toBe("x".repeat(301));
    // In the middle it means nothing special.
    expect(heartbeatReply("Disk is full; HEARTBEAT_OK was wrong earlier. Act now.", 300)).toBe(
      "Disk is full; HEARTBEAT_OK was wrong earlier. Act now.",
    );
    expect(heartbeatReply("The build failed.", 300)).toBe("The build failed.");
  });

  it("active hours: start inclusive, end exclusive, in the configured zone; start = end never runs", () => {
    const hours = { start: "09:00", end: "17:00", timezone: "America/New_York" };
    expect(withinActiveHours(hours, at("2026-01-05T14:00:00Z"), undefined)).toBe(true); // 09:00 EST
    expect(withinActiveHours(hours, at("2026-01-05T13:59:00Z"), undefined)).toBe(false);
    expect(withinActiveHours(hours, at("2026-01-05T22:00:00Z"), undefined)).toBe(false); // 17:00 EST
    expect(
      withinActiveHours({ start: "22:00", end: "06:00" }, at("2026-01-05T23:30:00Z"), "UTC"),
    ).toBe(true);
    expect(
      withinActiveHours({ start: "22:00", end: "06:00" }, at("2026-01-05T12:00:00Z"), "UTC"),
    ).toBe(false);
    expect(
      withinActiveHours({ start: "08:00", end: "08:00" }, at("2026-01-05T08:00:00Z"), "UTC"),
    ).toBe(false);
    expect(
      withinActiveHours({ start: "00:00", end: "24:00" }, at("2026-01-05T23:59:00Z"), "UTC"),
    ).toBe(true);
    // "user": agents.defaults.userTimezone.
    expect(
      withinActiveHours(
        { start: "09:00", end: "10:00", timezone: "user" },
        at("2026-01-05T08:30:00Z"),
        "Europe/Berlin",
      ),
    ).toBe(true);
  });

  it("an effectively empty HEARTBEAT.md skips the beat; an absent one does not", () => {
    expect(isEffectivelyEmpty("# Heartbeat\n\n- \n- [ ]\n")).toBe(true);
    expect(isEffectivelyEmpty("# Heartbeat\n- check the deploy queue")).toBe(false);
    expect(isEffectivelyEmpty(undefined)).toBe(false);
  });

  it("defaults every 30m to the owner; no owner DM means no beat is armed; 0m disables; per-agent blocks narrow", () => {
    const none = resolveHeartbeats(parseConfig({}));
    expect(none).toEqual([{ ok: false, agentId: "main", reason: "no-route" }]);
    const owner = resolveHeartbeats(
      parseConfig({ commands: { ownerAllowFrom: ["slack:U0OWNER"] } }),
    );
    expect(owner[0]).toMatchObject({
      ok: true,
      plan: {
        agentId: "main",
        everyMs: 30 * 60_000,
        ackMaxChars: 300,
        route: { channel: "slack", to: "U0OWNER" },
      },
    });
    const off = resolveHeartbeats(
      parseConfig({
        commands: { ownerAllowFrom: ["slack:U0OWNER"] },
        agents: { defaults: { heartbeat: { every: "0m" } } },
      }),
    );
    expect(off[0]).toMatchObject({ ok: false, reason: "disabled" });
    const perAgent = resolveHeartbeats(
      parseConfig({
        agents: {
          defaults: { heartbeat: { target: "none" } },
          list: [
            { id: "main", default: true },
            { id: "ops", heartbeat: { every: "1h" } },
          ],
        },
      }),
    );
    expect(perAgent).toEqual([
      expect.objectContaining({
        ok: true,
        plan: expect.objectContaining({ agentId: "ops", everyMs: 3_600_000, route: null }),
      }),
    ]);
  });
});
