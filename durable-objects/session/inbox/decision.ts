import type { EventDecision } from "../../session-api.ts";
import type { InboxStore } from "./store.ts";

/**
 * Why an event got the answer it got, from its inbox row: the decision triage recorded (refused and
 * the key that would change it, pairing, kept as context, a command), a dead letter's reason, or —
 * before triage has looked at it — `pending`. undefined: this session holds no event by that key.
 * The sender's text never appears here.
 */
export function eventDecision(inbox: InboxStore, dedupKey: string): EventDecision | undefined {
  const row = inbox.byKeyOrAlias(dedupKey);
  if (!row) return undefined;
  const base = { dedupKey: row.dedupKey, state: row.state };
  if (row.deadReason !== null) return { ...base, outcome: "failed", reason: row.deadReason };
  if (row.decision) {
    // userAt is the session's own bookkeeping (last-inbound.ts), not part of the answer.
    const { userAt: _userAt, ...decision } = row.decision;
    return { ...base, ...decision };
  }
  if (row.state === "new") return { ...base, outcome: "pending" };
  return { ...base, outcome: "accepted" };
}
