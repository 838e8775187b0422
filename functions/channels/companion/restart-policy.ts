/**
 * When to start the companion container again after it stopped, and when to stop trying: the
 * decision only, from the recent stops, so the Durable Object that keeps the container
 * (durable-objects/companion-keeper.ts) stays a thin layer over its storage and alarm.
 *
 * A clean stop (exit code 0: a rollout's SIGTERM, a graceful exit) is restarted after the minimum
 * delay and never counts toward the breaker. Unclean stops (any other exit code, a failed start)
 * double the delay for each one before it still inside the window (min, 2×min, 4×min …, capped);
 * the Nth unclean stop inside the window opens the breaker: no more restarts until a reset.
 */
export interface RestartBounds {
  restartMinMs: number;
  restartMaxMs: number;
  crashLoopStops: number;
  crashLoopWindowMs: number;
}

export interface RecordedStop {
  /** Unix ms. */
  at: number;
  clean: boolean;
}

export type RestartDecision =
  | { action: "restart"; at: number; uncleanInWindow: number }
  | { action: "breaker"; uncleanInWindow: number };

export function decideRestart(
  stops: readonly RecordedStop[],
  now: number,
  bounds: RestartBounds,
): RestartDecision {
  const uncleanInWindow = stops.filter(
    (stop) => !stop.clean && stop.at > now - bounds.crashLoopWindowMs,
  ).length;
  if (uncleanInWindow >= bounds.crashLoopStops) return { action: "breaker", uncleanInWindow };
  const delay = Math.min(
    bounds.restartMaxMs,
    bounds.restartMinMs * 2 ** Math.max(0, uncleanInWindow - 1),
  );
  return { action: "restart", at: now + delay, uncleanInWindow };
}

/** Stops older than the window no longer matter to any decision. */
export function stopsWorthKeeping(
  stops: readonly RecordedStop[],
  now: number,
  bounds: RestartBounds,
): RecordedStop[] {
  return stops.filter((stop) => stop.at > now - bounds.crashLoopWindowMs);
}
