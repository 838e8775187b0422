import { costOfRun } from "../run/deps.ts";
import { flushCronReports, hasCronReports } from "../inbox/automation.ts";
import { mirrorToPostgres } from "./postgres.ts";
import { runPlatformCostOf } from "../upkeep/platform-usage.ts";
import { isPostgresUnavailable } from "../../../functions/db/client.ts";
import { settings } from "../settings.ts";
import { sessionLog } from "../log.ts";
import type { SessionStore } from "../storage.ts";
import { describeError } from "../../../functions/core/describe-error.ts";
import type { SessionState } from "../state.ts";
import { lastInteractionAt, lastRoute } from "../last-inbound.ts";

/**
 * The mirror phase: when the session's rows are copied to Postgres (postgres.ts does the copy),
 * and the back-off after a failure. Postgres being down never blocks a conversation.
 */

/** Something written here is not in Postgres yet (transcript rows, or usage of a finished run, or a model call). */
export function hasUnmirrored(store: SessionStore): boolean {
  return (
    store.transcript.hasUnmirrored() ||
    store.runs.hasUnmirrored() ||
    store.modelCalls.hasUnmirrored()
  );
}

/** A failed mirror is tried again this long after (Postgres down never blocks a conversation). */
export const MIRROR_RETRY_MS = 5_000;

/** Something is waiting to be copied to Postgres, and when the mirror may next try. */
export function mirrorDueAt(s: SessionState, now: number): number | undefined {
  if (
    !s.env.DATABASE_URL ||
    !s.store.meta.get("sessionId") ||
    !(hasUnmirrored(s.store) || hasCronReports(s.store))
  )
    return undefined;
  return Math.max(now, Number(s.store.meta.get("mirrorRetryAt") ?? 0));
}

/** Copies what changed to Postgres; a failure is recorded so the alarm schedule backs off. */
export async function mirror(s: SessionState): Promise<void> {
  const done = await mirrorOnce(s);
  if (done) s.store.meta.delete("mirrorRetryAt");
  else s.store.meta.set("mirrorRetryAt", String(Date.now() + MIRROR_RETRY_MS));
}

async function mirrorOnce(s: SessionState): Promise<boolean> {
  const sessionId = s.store.meta.get("sessionId");
  if (!sessionId || !s.env.DATABASE_URL) return true;
  const lastRun = s.store.runs.active();
  try {
    await mirrorToPostgres({
      env: s.env,
      store: s.store,
      batchSize: s.config.messages.mirrorBatchSize,
      costOf: (modelRef, usage) => costOfRun(s.config, s.env, modelRef, usage),
      platformCostOf: (run) => runPlatformCostOf(s, run),
      facts: {
        sessionKey: s.store.meta.get("sessionKey") ?? "",
        sessionId,
        agentId: s.store.meta.get("agentId") ?? "main",
        channel: lastRun?.route.channel ?? lastRoute(s.store)?.channel ?? null,
        chatType: s.store.meta.get("chatType") ?? null,
        lastRoute: lastRoute(s.store) ?? null,
        modelOverride: settings(s).modelOverride ?? null,
        sessionStartedAt: Number(s.store.meta.get("sessionStartedAt") ?? Date.now()),
        lastInteractionAt: lastInteractionAt(s.store) ?? null,
      },
    });
    await flushCronReports(s);
    // A full batch leaves more behind: mirrorDueAt sees the unmirrored rows and asks for a pass now.
    return true;
  } catch (error) {
    // Postgres being down never blocks a conversation: the mirror retries on the next alarm.
    // First lines only: a failed query's message carries its parameters (transcript text).
    // An outage was already logged, once, by the database client.
    if (!isPostgresUnavailable(error))
      sessionLog(s).error("session mirror failed", { error: describeError(error) });
    return false;
  }
}
