import { sessionControl } from "../control.ts";
import { progressRelay, refuse, reply } from "../outbox/replies.ts";
import { currentSessionId, rotateSession } from "../lifecycle.ts";
import { sessionMeter } from "../upkeep/metering.ts";
import { settings } from "../settings.ts";
import { captureEndingSession } from "../run/session-memory.ts";
import { deadLetterEvents } from "../outbox/dead-letter.ts";
import { clearRetry, recordFailure, retryPending } from "../retry.ts";
import { scheduleAlarm } from "../schedule.ts";
import { countSession } from "../upkeep/metrics.ts";
import { sessionLog } from "../log.ts";
import type { SessionState } from "../state.ts";
import { triageInbound } from "./triage.ts";
import { senderMayHearOfFailure } from "./triage-access.ts";
import type { TriageHost } from "./triage-host.ts";
import type { TriagedMessage } from "./store.ts";
import { startTriagedRun } from "../run/start.ts";

/**
 * Triages every new event in arrival order. One pass at a time per object: a caller that arrives
 * while a pass is running shares it, and events accepted meanwhile join that pass.
 *
 * The last message of a pass that could start its run at once is held in memory (`held`, its row
 * still `new`) and, synchronously at the pass's end, written once with its run's start
 * (startTriagedRun) instead of first as `queued`. Any other way out of the pass writes it
 * `queued`, as does triaging another event after it (so messages triaged together still merge
 * per the queue mode). The pass is the only reader of `new` rows that acts on them and holds the
 * row only while it runs, so no second triage sees it; a crash meanwhile leaves it `new`, triaged
 * again by the next pass: never lost, never run twice.
 */
export function triage(s: SessionState): Promise<void> {
  s.triaging ??= (async () => {
    if (retryPending(s)) return;
    let held: TriagedMessage | undefined;
    const queueHeld = () => {
      if (held) s.store.inbox.prepare(held.seq, held.prepared, held.decision);
      held = undefined;
    };
    const hold = (triaged: TriagedMessage) => {
      queueHeld();
      held = triaged;
    };
    const next = () => s.store.inbox.byState("new").find((row) => row.seq !== held?.seq);
    try {
      // Re-read after each event: events accepted while one is being triaged join this pass.
      for (let row = next(); row; row = next()) {
        queueHeld();
        try {
          // A host per event: whether a run is active is read as each event is triaged.
          await triageInbound(row, triageHost(s, hold));
          clearRetry(s);
        } catch (error) {
          queueHeld();
          // Postgres (access store) unreachable or similar: the event stays stored and in order
          // and is tried again with backoff; nothing is dropped by a short outage. A permanent
          // failure, or one that outlasts messages.processing.maxAttempts, sets this one aside.
          const verdict = recordFailure(s, `triage of event ${row.seq}`, [row.seq], error);
          if (verdict.outcome === "retry") return;
          const current = s.store.inbox.bySeq(row.seq);
          if (current?.state === "new")
            deadLetterEvents(s, [current], verdict.reason, {
              tellSender: await senderMayHearOfFailure(current, s.config),
            });
          clearRetry(s);
        }
      }
      const last = held;
      // Let go first: a failure inside the start leaves the row `new` (triaged again), never
      // queued beside a run that took it.
      held = undefined;
      if (last && !startTriagedRun(s, last))
        s.store.inbox.prepare(last.seq, last.prepared, last.decision);
    } finally {
      queueHeld();
    }
  })().finally(() => {
    s.triaging = null;
    // Triage during a run (not inside a pass) changed storage too: re-plan the wake-up.
    void scheduleAlarm(s);
  });
  return s.triaging;
}

function triageHost(s: SessionState, hold: (triaged: TriagedMessage) => void): TriageHost {
  return {
    env: s.env,
    config: s.config,
    store: s.store,
    activeRun: s.active ? { runId: s.active.runId } : null,
    settings: () => settings(s),
    control: sessionControl(s),
    rotateSession: (reason) => {
      sessionLog(s).info("session auto-reset", { reason });
      captureEndingSession(s, `auto-reset (${reason})`);
      rotateSession(s);
    },
    abortActiveRun: (reason) => s.abortActiveRun(reason),
    reply: (row, texts, settle, opts) => reply(s, row, texts, settle, opts),
    refuse: (row, route, text) => refuse(s, row, route, text),
    emit: (seq, event) => s.emit([seq], event),
    queue: (triaged, holdForRun) => {
      if (holdForRun) hold(triaged);
      else s.store.inbox.prepare(triaged.seq, triaged.prepared, triaged.decision);
    },
    progressAccepted: (row) => progressRelay(s, null, row.event.envelope.route).accepted(row.seq),
    meterFor: (row, kind) =>
      sessionMeter(s, {
        kind,
        runId: null,
        sessionId: currentSessionId(s, Date.now()),
        channel: row.event.envelope.channel,
        senderId: row.event.envelope.senderId,
      }),
    refused: (row, reason) =>
      countSession(s, "edgeclaw_events_refused_total", {
        channel: row.event.envelope.channel,
        reason,
      }),
  };
}
