/**
 * An event taken by a run that finished normally is settled by that run's end alone (schema step
 * 21): the run's row records the reply its events settle with (`runs.events_reply`, JSON: the
 * answer, "" for a silent one, or null), in the UPDATE that records its end, instead of one
 * `UPDATE inbox … state = 'settled'` per event (a billed row per message). Both were one fact
 * written in one transaction; a crash leaves both or neither.
 *
 * Every read of an event's state goes through EVENTS, which gives such a row as settled, with the
 * run's reply and end time. The row is written settled later, where it is written anyway: the
 * sweep clears its payload an hour after it settled (inbox/store.ts prune), and before it deletes
 * the run it depends on (run/runs-store.ts prune asks for it).
 */

/** The run's end settles the row: it is still `taken`, and its run recorded the reply. */
const BY_RUN = `i.state = 'taken' AND r.events_reply IS NOT NULL`;

/** The inbox as its rows stand, for reads: `FROM ${EVENTS}` in place of `FROM inbox`. */
export const EVENTS = `(
  SELECT i.seq, i.dedup_key, i.event, i.run_id, i.prepared, i.received_at, i.failures,
         i.dead_reason, i.decision,
         CASE WHEN ${BY_RUN} THEN 'settled' ELSE i.state END AS state,
         CASE WHEN ${BY_RUN} THEN json_extract(r.events_reply, '$') ELSE i.reply END AS reply,
         CASE WHEN ${BY_RUN} THEN r.finished_at ELSE i.settled_at END AS settled_at
    FROM inbox AS i LEFT JOIN runs AS r ON r.run_id = i.run_id AND i.state = 'taken'
) AS inbox`;

/**
 * Writes `taken` rows settled by their run's end as settled, for the runs `where` (SQL over `runs`)
 * names; `clearPayload` clears their payload in the same write (the sweep's hour-old rows).
 */
export function recordSettledByRun(
  sql: SqlStorage,
  runs: { where: string; bindings: SqlStorageValue[]; clearPayload?: boolean },
): void {
  sql.exec(
    `UPDATE inbox SET state = 'settled', reply = json_extract(runs.events_reply, '$'),
            settled_at = runs.finished_at${runs.clearPayload ? `, event = '{}'` : ""}
       FROM runs
      WHERE runs.run_id = inbox.run_id AND inbox.state = 'taken' AND runs.events_reply IS NOT NULL
        AND ${runs.where}`,
    ...runs.bindings,
  );
}
