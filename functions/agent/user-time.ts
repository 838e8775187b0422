import type { EdgeclawConfig } from "../config/schema.ts";
import { isTimeZone } from "../core/time-zone.ts";

/** A valid IANA zone from `agents.defaults.userTimezone`, else UTC (a Worker has no local zone). */
export function resolveUserTimezone(config: EdgeclawConfig): string {
  const zone = config.agents.defaults.userTimezone;
  return zone && isTimeZone(zone) ? zone : "UTC";
}

export function formatLocalDate(now: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-US", {
    timeZone,
    weekday: "long",
    year: "numeric",
    month: "long",
    day: "numeric",
  }).format(now);
}
