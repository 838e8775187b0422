import type { ReplyRoute } from "../../functions/core/envelope.ts";
import type { InboxStore } from "./inbox/store.ts";
import type { MetaStore } from "./meta.ts";

/**
 * Where the session's last accepted message came from, and when a person last wrote to it.
 * Heartbeats and "last" targets follow the route; idle resets, /status and the Postgres session
 * index read the time.
 *
 * Both are facts of the newest event triage accepted as a person's message: its route is in its
 * payload, the time in its decision (`decision.userAt`, written by triage's one UPDATE of the row),
 * so no row is written for them per message. The meta row `lastInbound` holds what the inbox no
 * longer can: the sweep folds the newest such event into it (with its seq) in the transaction that
 * clears that event's payload, and a new session writes it without the time. A read takes the
 * newest such event above the folded seq, else the meta row.
 *
 * Objects from before: `lastInbound` was rewritten by triage with every message (no seq: every
 * event accepted since carries `userAt` and is newer), and before that `lastRoute` and
 * `lastInteractionAt`, read where `lastInbound` says nothing.
 */

/** The stores the facts are read from (a SessionStore, or a test's own). */
export interface InboundStores {
  meta: MetaStore;
  inbox: InboxStore;
}

interface LastInbound {
  route: ReplyRoute | undefined;
  userAt: number | undefined;
  /** The inbox row the facts come from (undefined: they come from meta). */
  seq: number | undefined;
}

function lastInbound(store: InboundStores): LastInbound & { folded: number } {
  const folded = store.meta.getJson("lastInbound");
  const floor = folded?.seq ?? 0;
  const newest = store.inbox.newestInbound(floor);
  if (newest) return { route: newest.route, userAt: newest.userAt, seq: newest.seq, folded: floor };
  return {
    route: folded?.route ?? store.meta.getJson("lastRoute"),
    userAt: folded?.userAt,
    seq: undefined,
    folded: floor,
  };
}

/** The route of the last accepted message. */
export function lastRoute(store: InboundStores): ReplyRoute | undefined {
  return lastInbound(store).route;
}

/** When a person last wrote in the current session (undefined: not since it started). */
export function lastInteractionAt(store: InboundStores): number | undefined {
  const times = [lastInbound(store).userAt, store.meta.get("lastInteractionAt")]
    .filter((value) => value !== undefined)
    .map(Number);
  return times.length ? Math.max(...times) : undefined;
}

/**
 * The sweep, in its transaction, before the inbox clears payloads: the newest person's message
 * goes into meta when its payload is about to be cleared (older ones are covered by it). One row
 * written per sweep at most, and only in a session idle for an hour since its last message.
 */
export function foldLastInbound(store: InboundStores, now: number): void {
  const newest = store.inbox.newestInbound(store.meta.getJson("lastInbound")?.seq ?? 0);
  if (!newest?.payloadExpired(now)) return;
  store.meta.setJson("lastInbound", {
    route: newest.route,
    userAt: newest.userAt,
    seq: newest.seq,
  });
}

/**
 * A new session under the same key (/new, /reset, an idle or daily reset): what was written before
 * belongs to the session that ended. The route stays; the time is forgotten, for every event up to
 * the newest one triage accepted so far (those after it are the new session's). The first session
 * of an object forgets nothing: the message that starts it is its first interaction.
 */
export function forgetInteraction(store: InboundStores): void {
  store.meta.delete("lastInteractionAt");
  const { route, seq, folded } = lastInbound(store);
  if (route === undefined) return;
  const covered = seq ?? folded;
  store.meta.setJson("lastInbound", covered ? { route, seq: covered } : { route });
}
