import type { ReplyRoute } from "../../functions/core/envelope.ts";
import type { MetaStore } from "./meta.ts";

/**
 * Where the session's last accepted message came from, and when a person last wrote to it: one
 * meta row (`lastInbound`), written by triage with the message. Heartbeats and "last" targets
 * follow the route; idle resets, /status and the Postgres session index read the time. They were
 * two rows (`lastRoute` at triage, `lastInteractionAt` when the run started), a billed row more per
 * message. Objects from before keep their old keys, read where `lastInbound` says nothing.
 */

/**
 * Records an accepted message's route and, for a person's message (`userMessageAt`; not a
 * heartbeat, cron or hook event), the time the idle reset counts from.
 */
export function recordInbound(
  meta: MetaStore,
  route: ReplyRoute,
  userMessageAt: number | undefined,
): void {
  const userAt = userMessageAt ?? meta.getJson("lastInbound")?.userAt;
  meta.setJson("lastInbound", userAt === undefined ? { route } : { route, userAt });
}

/** The route of the last accepted message. */
export function lastRoute(meta: MetaStore): ReplyRoute | undefined {
  return meta.getJson("lastInbound")?.route ?? meta.getJson("lastRoute");
}

/** When a person last wrote in the current session (undefined: not since it started). */
export function lastInteractionAt(meta: MetaStore): number | undefined {
  const times = [meta.getJson("lastInbound")?.userAt, meta.get("lastInteractionAt")]
    .filter((value) => value !== undefined)
    .map(Number);
  return times.length ? Math.max(...times) : undefined;
}

/**
 * A new session under the same key (/new, /reset, an idle or daily reset): what was written before
 * belongs to the session that ended. The first session of an object forgets nothing: the message
 * that starts it is its first interaction.
 */
export function forgetInteraction(meta: MetaStore): void {
  meta.delete("lastInteractionAt");
  const inbound = meta.getJson("lastInbound");
  if (inbound?.userAt !== undefined) meta.setJson("lastInbound", { route: inbound.route });
}
