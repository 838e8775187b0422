import type { ReplyRoute } from "../../functions/core/envelope.ts";
import { decodeFileRef, type OutboundFileRef } from "../../functions/media/outbound.ts";
import type { Message, ToolSpec } from "../../functions/agent/types.ts";
import type { RoutedEvent } from "../session-api.ts";
import type { IncomingText } from "../../functions/agent/turn-text.ts";

export type InboxState =
  /** accepted, not yet looked at */
  | "new"
  /** allowed and waiting for a run (queue) */
  | "queued"
  /** taken by a run (as its trigger or as a steer message) */
  | "taken"
  /** finished: answered, dropped, or handled without a run */
  | "settled";

export interface InboxRow {
  seq: number;
  dedupKey: string;
  event: RoutedEvent;
  state: InboxState;
  runId: string | null;
  /** What triage decided for an allowed message (cleaned text, one-shot directives, owner flag). */
  prepared: PreparedMessage | null;
  /** The visible answer this event got (final reply or notice), kept for idempotent HTTP retries. */
  reply: string | null;
  receivedAt: number;
  /** Transient failures while triaging or setting up a run for this event (bounded). */
  failures: number;
  /** Why the event was dead-lettered instead of answered; null for every other event. */
  deadReason: string | null;
  /** What triage decided; null until it has looked at the event (and for automation events). */
  decision: TriageDecision | null;
}

/**
 * What triage made of an event, kept with its tombstone (`inbox.decision`): the answer to "why did
 * this get no reply" (GET /admin/sessions/:key/events/:dedupKey, `edgeclaw simulate`).
 */
export interface TriageDecision {
  outcome: "accepted" | "pairing" | "refused" | "no-mention" | "context" | "command";
  /** For people: "group not in the group allowlist". */
  reason?: string;
  /** The config key that would change the outcome (functions/routing/access.ts names it). */
  configKey?: string;
  /**
   * accepted, a person's message: when triage accepted it. The newest such row is the session's
   * last inbound message (last-inbound.ts reads its route and this time; no meta row per message).
   */
  userAt?: number;
}

/** What triage decided for an allowed message; the run composes (and fences) it with composeTurnText. */
export interface PreparedMessage extends IncomingText {
  senderIsOwner: boolean;
  oneShot?: Record<string, string>;
  /** Arrived while a run was active: subject to the queue mode and its debounce. */
  queuedBehindRun: boolean;
  /** Where the answer goes when it is not the event's own route (a heartbeat with target "last"). */
  route?: ReplyRoute;
}

/** `waiting`: the run called the caller's function tools and waits for their results (/v1/responses). */
export type RunState = "running" | "waiting" | "finished" | "failed" | "aborted";

export interface RunRow {
  runId: string;
  sessionId: string;
  state: RunState;
  route: ReplyRoute;
  modelRef: string | null;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  progressState: Record<string, string>;
  options: RunOptions;
  startedAt: number;
  finishedAt: number | null;
  /** Times the run was picked up again after the alarm pass that ran it ended. */
  resumes: number;
}

/** Per-run choices fixed at run start (so a resumed run behaves like the original). */
export interface RunOptions {
  model?: string;
  senderIsOwner?: boolean;
  /** One-shot directive hints (inline /think etc.) that applied to this run only. */
  oneShot?: Record<string, string>;
  triggerSeqs?: number[];
  /** What this run's model calls are metered as (metering.ts): "turn" unless a heartbeat, cron, … run says otherwise. */
  callKind?: string;
  /** A cron job's or heartbeat's own wall-time budget, in place of the agent's timeoutSeconds. */
  timeoutSeconds?: number;
  /** The session's first run after /new or /reset (session-memory.ts): the prompt gets the startup context. */
  startupContext?: boolean;
  /** /v1/responses: the caller's function tools, offered to the model beside the agent's own. */
  clientTools?: ToolSpec[];
  /** While `waiting`: since when, and when the wait expires (responses/client-tools.ts). */
  clientWait?: { since: number; until: number };
  /** Time spent waiting for the caller so far: not counted against the run's timeout. */
  waitedMs?: number;
}

export type OutboxState = "pending" | "sending" | "sent" | "unknown" | "dead";

export interface OutboxRow {
  id: string;
  runId: string | null;
  route: ReplyRoute;
  text: string;
  chunkIndex: number;
  chunkCount: number;
  state: OutboxState;
  attempts: number;
  nextAt: number;
  platformId: string | null;
  lastError: string | null;
  createdAt: number;
  /** When the chunk was first handed to the platform (null before that): nothing it created is older. */
  firstAttemptAt: number | null;
  /** A file this row sends (its bytes are in the media store; `text` is its caption), or null. */
  media: OutboundFileRef | null;
}

export interface TranscriptRow {
  seq: number;
  sessionId: string;
  runId: string | null;
  message: Message;
  createdAt: number;
}

/**
 * Typed access to the SessionDO tables (schema and migrations: schema.ts). The source of truth for
 * a live session: every table is written in the same synchronous transaction as the decision it
 * records, so an eviction between two awaits never leaves a half-made state behind. Synchronous,
 * like the storage API underneath.
 */
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
    deadReason:
      row.dead_reason === null || row.dead_reason === undefined ? null : String(row.dead_reason),
    decision:
      row.decision === null || row.decision === undefined
        ? null
        : (JSON.parse(String(row.decision)) as TriageDecision),
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
    firstAttemptAt:
      row.first_attempt_at === null || row.first_attempt_at === undefined
        ? null
        : Number(row.first_attempt_at),
    media: decodeFileRef(row.media),
  };
}
