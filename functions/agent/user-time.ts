import type { EdgeclawConfig } from "../config/schema.ts";

/** A valid IANA zone from `agents.defaults.userTimezone`, else UTC (a Worker has no local zone). */
export function resolveUserTimezone(config: EdgeclawConfig): string {
  const zone = config.agents.defaults.userTimezone;
  if (!zone) return "UTC";
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return zone;
  } catch {
    return "UTC";
  }
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
