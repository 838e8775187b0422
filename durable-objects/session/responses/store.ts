import type { Usage } from "../../../functions/agent/types.ts";
import type { ClientToolCall } from "../../session-api.ts";

/**
 * The `responses` table's one owner: every /v1/responses response this session gave, by id, with
 * who may continue it (`scope`), the inbox event it answers (`dedup_key`, `seq`), and how it ended.
 * previous_response_id is checked against it, a retried request (same Idempotency-Key) is answered
 * from it, and a response that ended with function calls names the run that waits for them.
 */

/** At most this many per session (the newest), and none older than RESPONSE_RETENTION_MS. */
export const MAX_RESPONSES = 100;
export const RESPONSE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export type ResponseStatus = "in_progress" | "completed" | "failed";

/** How a response ended. */
export interface ResponseOutcome {
  text: string;
  usage: Usage;
  modelRef: string;
  /** Client function calls the response ended with (its run waits for their outputs). */
  calls?: ClientToolCall[];
  /** Why those calls can no longer be answered (the wait expired, the conversation went on). */
  callsClosed?: string;
  error?: { code: string; message: string };
}

export interface ResponseRecord {
  id: string;
  dedupKey: string;
  seq: number;
  scope: string;
  previousId: string | null;
  runId: string | null;
  status: ResponseStatus;
  outcome: ResponseOutcome | null;
  createdAt: number;
  finishedAt: number | null;
}

type Row = Record<string, SqlStorageValue>;

function toRecord(row: Row): ResponseRecord {
  return {
    id: String(row.id),
    dedupKey: String(row.dedup_key),
    seq: Number(row.seq),
    scope: String(row.scope),
    previousId: row.previous_id === null ? null : String(row.previous_id),
    runId: row.run_id === null ? null : String(row.run_id),
    status: String(row.status) as ResponseStatus,
    outcome: row.outcome === null ? null : (JSON.parse(String(row.outcome)) as ResponseOutcome),
    createdAt: Number(row.created_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  };
}

export class ResponsesStore {
  constructor(private readonly sql: SqlStorage) {}

  /** Records a new response (in progress) and keeps the table within its bound. */
  insert(record: Omit<ResponseRecord, "status" | "outcome" | "finishedAt">): void {
    this.sql.exec(
      `INSERT INTO responses(id, dedup_key, seq, scope, previous_id, run_id, status, created_at)
       VALUES(?, ?, ?, ?, ?, ?, 'in_progress', ?)`,
      record.id,
      record.dedupKey,
      record.seq,
      record.scope,
      record.previousId,
      record.runId,
      record.createdAt,
    );
    this.sql.exec(
      `DELETE FROM responses WHERE id NOT IN (SELECT id FROM responses ORDER BY seq DESC LIMIT ?)`,
      MAX_RESPONSES,
    );
  }

  get(id: string): ResponseRecord | undefined {
    const row = this.sql.exec<Row>(`SELECT * FROM responses WHERE id = ?`, id).toArray()[0];
    return row ? toRecord(row) : undefined;
  }

  byDedupKey(dedupKey: string): ResponseRecord | undefined {
    const row = this.sql
      .exec<Row>(`SELECT * FROM responses WHERE dedup_key = ?`, dedupKey)
      .toArray()[0];
    return row ? toRecord(row) : undefined;
  }

  /** The conversation's latest response: the only one that can be continued (one transcript). */
  newest(): ResponseRecord | undefined {
    const row = this.sql
      .exec<Row>(`SELECT * FROM responses ORDER BY seq DESC LIMIT 1`)
      .toArray()[0];
    return row ? toRecord(row) : undefined;
  }

  /** The responses still in progress that answer one of these inbox events. */
  openForSeqs(seqs: readonly number[]): ResponseRecord[] {
    if (!seqs.length) return [];
    return this.sql
      .exec<Row>(
        `SELECT * FROM responses WHERE status = 'in_progress' AND seq IN (${seqs.map(() => "?").join(", ")})`,
        ...seqs,
      )
      .toArray()
      .map(toRecord);
  }

  /** Usage already reported by this run's earlier responses (a resumed run reports only the rest). */
  reportedUsage(runId: string): Usage {
    const total: Usage = {
      inputTokens: 0,
      outputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    };
    for (const row of this.sql
      .exec<Row>(`SELECT outcome FROM responses WHERE run_id = ? AND outcome IS NOT NULL`, runId)
      .toArray()) {
      const usage = (JSON.parse(String(row.outcome)) as ResponseOutcome).usage;
      total.inputTokens += usage.inputTokens;
      total.outputTokens += usage.outputTokens;
      total.cacheReadTokens += usage.cacheReadTokens;
      total.cacheWriteTokens += usage.cacheWriteTokens;
    }
    return total;
  }

  finish(
    id: string,
    runId: string | null,
    status: ResponseStatus,
    outcome: ResponseOutcome,
    now: number,
  ): void {
    this.sql.exec(
      `UPDATE responses SET status = ?, run_id = ?, outcome = ?, finished_at = ? WHERE id = ?`,
      status,
      runId,
      JSON.stringify(outcome),
      now,
      id,
    );
  }

  /** The response of this run that ended with function calls, if its calls are still open. */
  waitingFor(runId: string): ResponseRecord | undefined {
    return this.sql
      .exec<Row>(`SELECT * FROM responses WHERE run_id = ? ORDER BY seq DESC LIMIT 1`, runId)
      .toArray()
      .map(toRecord)
      .find((record) => record.outcome?.calls?.length && !record.outcome.callsClosed);
  }

  closeCalls(record: ResponseRecord, reason: string): void {
    if (!record.outcome) return;
    this.sql.exec(
      `UPDATE responses SET outcome = ? WHERE id = ?`,
      JSON.stringify({ ...record.outcome, callsClosed: reason }),
      record.id,
    );
  }

  /** The age bound (the count bound holds at every insert). */
  prune(now: number): void {
    this.sql.exec(`DELETE FROM responses WHERE created_at < ?`, now - RESPONSE_RETENTION_MS);
  }
}
