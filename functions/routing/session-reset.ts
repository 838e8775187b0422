import type { ChatType } from "../core/envelope.ts";
import { wallClock, zonedTimeToUtc } from "../core/time-zone.ts";
import type { EdgeclawConfig, ResetPolicy } from "../config/schema.ts";

/**
 * Automatic session resets (concepts/session "Session lifecycle"). The policy in force:
 * `session.resetByChannel.<channel>` (replaces everything else) → `session.resetByType.thread|group|direct`
 * → `session.reset` (mode "none" by default). Freshness uses only `sessionStartedAt` (daily) and
 * `lastInteractionAt` (idle; falls back to sessionStartedAt): the caller must not bump
 * lastInteractionAt for heartbeat, cron or system events. With daily and idleMinutes both set,
 * whichever expires first resets.
 */
export function resolveResetPolicy(
  config: EdgeclawConfig,
  target: { channel: string; chatType: ChatType; threadId?: string },
): ResetPolicy {
  const byChannel = config.session.resetByChannel[target.channel];
  if (byChannel) return byChannel;
  const byType = config.session.resetByType;
  const typed =
    target.threadId && target.chatType !== "direct"
      ? (byType.thread ?? byType.group)
      : target.chatType === "direct"
        ? byType.direct
        : byType.group;
  return typed ?? config.session.reset;
}

export type ResetVerdict = { reset: false } | { reset: true; reason: "daily" | "idle" };

export function sessionResetDue(input: {
  policy: ResetPolicy;
  sessionStartedAt: number;
  lastInteractionAt?: number;
  now: number;
  /** IANA zone for `atHour` (agents.defaults.userTimezone); UTC when unset. */
  timeZone?: string;
}): ResetVerdict {
  const { policy, now } = input;
  if (policy.mode === "none") return { reset: false };
  if (policy.idleMinutes !== undefined) {
    const last = input.lastInteractionAt ?? input.sessionStartedAt;
    if (now - last >= policy.idleMinutes * 60_000) return { reset: true, reason: "idle" };
  }
  if (
    policy.mode === "daily" &&
    input.sessionStartedAt < lastDailyBoundary(now, policy.atHour, input.timeZone)
  ) {
    return { reset: true, reason: "daily" };
  }
  return { reset: false };
}

/** The most recent `atHour:00` local time at or before `now`, as Unix ms. */
export function lastDailyBoundary(now: number, atHour: number, timeZone = "UTC"): number {
  const local = wallClock(now, timeZone);
  let boundary = zonedTimeToUtc({ ...local, hour: atHour, minute: 0, second: 0 }, timeZone);
  if (boundary > now) {
    const yesterday = wallClock(now - 24 * 3_600_000, timeZone);
    boundary = zonedTimeToUtc({ ...yesterday, hour: atHour, minute: 0, second: 0 }, timeZone);
  }
  return boundary;
}
