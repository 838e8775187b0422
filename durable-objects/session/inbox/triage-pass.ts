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

/**
 * Triages every new event in arrival order. One pass at a time per object: a caller that arrives
 * while a pass is running shares it, and events accepted meanwhile join that pass.
 */
export function triage(s: SessionState): Promise<void> {
  s.triaging ??= (async () => {
    if (retryPending(s)) return;
    // Re-read after each event: events accepted while one is being triaged join this pass.
    for (let row = s.store.inbox.byState("new")[0]; row; row = s.store.inbox.byState("new")[0]) {
      try {
        await triageInbound(row, triageHost(s));
        clearRetry(s);
      } catch (error) {
        // Postgres (access store) unreachable or similar: the event stays stored and in order and
        // is tried again with backoff; nothing is dropped by a short outage. A permanent failure,
        // or one that outlasts messages.processing.maxAttempts, sets this one event aside.
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
  })().finally(() => {
    s.triaging = null;
    // Triage during a run (not inside a pass) changed storage too: re-plan the wake-up.
    void scheduleAlarm(s);
  });
  return s.triaging;
}

function triageHost(s: SessionState): TriageHost {
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
