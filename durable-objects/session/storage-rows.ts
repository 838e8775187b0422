import type { ReplyRoute } from "../../functions/channels/envelope.ts";
import type { Message } from "../../functions/agent/types.ts";
import type { RoutedEvent } from "../session-api.ts";
import type { InboxRow, InboxState, OutboxRow, OutboxState, PreparedMessage, RunOptions, RunRow, RunState, TranscriptRow } from "./storage.ts";

/** A raw SQLite row of the SessionDO tables, and its typed form. Columns added by later schema steps fall back to their defaults. */
export type Row = Record<string, SqlStorageValue>;

export function toInboxRow(row: Row): InboxRow {
  return {
    seq: Number(row.seq),
    dedupKey: String(row.dedup_key),
    event: JSON.parse(String(row.event)) as RoutedEvent,
    state: String(row.state) as InboxState,
    runId: row.run_id === null ? null : String(row.run_id),
    prepared: row.prepared === null ? null : (JSON.parse(String(row.prepared)) as PreparedMessage),
    reply: row.reply === null ? null : String(row.reply),
    receivedAt: Number(row.received_at),
    failures: Number(row.failures ?? 0),
    deadReason: row.dead_reason === null || row.dead_reason === undefined ? null : String(row.dead_reason),
  };
}

export function toRunRow(row: Row): RunRow {
  return {
    runId: String(row.run_id),
    sessionId: String(row.session_id),
    state: String(row.state) as RunState,
    route: JSON.parse(String(row.route)) as ReplyRoute,
    modelRef: row.model_ref === null ? null : String(row.model_ref),
    steps: Number(row.steps),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    cacheReadTokens: Number(row.cache_read_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    progressState: JSON.parse(String(row.progress_state)) as Record<string, string>,
    options: JSON.parse(String(row.options)) as RunOptions,
    startedAt: Number(row.started_at),
    finishedAt: row.finished_at === null ? null : Number(row.finished_at),
    resumes: Number(row.resumes ?? 0),
  };
}

export function toTranscriptRow(row: Row): TranscriptRow {
  return {
    seq: Number(row.seq),
    sessionId: String(row.session_id),
    runId: row.run_id === null ? null : String(row.run_id),
    message: JSON.parse(String(row.message)) as Message,
    createdAt: Number(row.created_at),
  };
}

export function toOutboxRow(row: Row): OutboxRow {
  return {
    id: String(row.id),
    runId: row.run_id === null ? null : String(row.run_id),
    route: JSON.parse(String(row.route)) as ReplyRoute,
    text: String(row.text),
    chunkIndex: Number(row.chunk_index),
    chunkCount: Number(row.chunk_count),
    state: String(row.state) as OutboxState,
    attempts: Number(row.attempts),
    nextAt: Number(row.next_at),
    platformId: row.platform_id === null ? null : String(row.platform_id),
    lastError: row.last_error === null ? null : String(row.last_error),
    createdAt: Number(row.created_at),
  };
}
