import { secretMasker } from "../../../functions/logging/logger.ts";
import type { DeadLetter, DeadLetterActionResult } from "../../session-api.ts";
import { OUTCOME_UNKNOWN } from "./deliver-due.ts";
import type { SessionState } from "../state.ts";

/**
 * The operator's side of dead letters (admin API, control page): list them, send a dead reply chunk
 * again, or discard one. A dead letter is a row this session already owns — an outbox chunk in
 * state "dead", or an inbox event with a `dead_reason` — so every action is a change to that row,
 * and the session's own machinery (the outbox, the alarm plan) does the rest.
 */

/**
 * What the session gave up on, without secrets: the text and reason are masked for every configured
 * secret (a provider echoing a key in an error, a pasted token), and the reply route's `extra`
 * (response URLs, which are credentials of their own) is never shown.
 */
export function listDeadLetters(s: SessionState): DeadLetter[] {
  const mask = secretMasker(s.config, s.env as unknown as Record<string, unknown>);
  const clean = (value: string | null) => (value === null ? null : mask(value));
  const events = s.store.inbox.deadLettered().map(
    (row): DeadLetter => ({
      kind: "event",
      id: row.event.envelope.dedupKey,
      channel: row.event.envelope.channel,
      to: row.event.envelope.route.to,
      text: clean(row.event.envelope.text ?? "") ?? "",
      error: clean(row.deadReason),
      attempts: row.failures,
      at: row.receivedAt,
      retryable: false,
    }),
  );
  const replies = s.store.outbox.rows("dead").map(
    (row): DeadLetter => ({
      kind: "reply",
      id: row.id,
      channel: row.route.channel,
      to: row.route.to,
      text: clean(row.text) ?? "",
      error: clean(row.lastError),
      attempts: row.attempts,
      at: row.createdAt,
      retryable: true,
    }),
  );
  return [...events, ...replies];
}

/**
 * Puts a dead reply chunk back into the outbox under its original chunk id, so it keeps its place
 * (its creation time orders it before anything queued later) and its idempotency key. A chunk that
 * died while its last send's outcome was unknown goes back as "unknown": the outbox asks the
 * platform whether it landed (or re-sends under the same key where the platform drops repeats)
 * before any new send, so a retry never makes a second visible reply. Inbound events are not
 * retried: their sender was already told the message was set aside, and an answer now would be a
 * second reply to that event; they can be discarded.
 */
export function retryDeadLetter(s: SessionState, id: string, now: number): DeadLetterActionResult {
  const row = s.store.outbox.rows("dead").find((candidate) => candidate.id === id);
  if (!row) {
    if (s.store.inbox.byKey(id)?.deadReason) {
      return {
        ok: false,
        status: 409,
        reason:
          "an inbound event's sender was already told it was set aside; it can be discarded, not retried",
      };
    }
    return { ok: false, status: 404, reason: `no dead letter "${id}" in this session` };
  }
  const state = row.lastError?.startsWith(OUTCOME_UNKNOWN) ? "unknown" : "pending";
  s.store.outbox.update(row.id, { state, attempts: 0, nextAt: now }, now);
  return { ok: true, kind: "reply", id: row.id, state };
}

/**
 * Removes a dead letter from the list. A reply chunk's row is deleted (nothing will queue that id
 * again: its run has ended). An event keeps its inbox row, which is the dedup tombstone that stops a
 * platform's redelivery from being answered; only its dead-letter mark goes.
 */
export function discardDeadLetter(s: SessionState, id: string): DeadLetterActionResult {
  if (s.store.outbox.deleteDead(id)) return { ok: true, kind: "reply", id, state: "discarded" };
  if (s.store.inbox.clearDeadReason(id)) return { ok: true, kind: "event", id, state: "discarded" };
  return { ok: false, status: 404, reason: `no dead letter "${id}" in this session` };
}
