import type { EdgeclawConfig } from "../config/schema.ts";
import type { InboundAttachment, ReplyRoute } from "../core/envelope.ts";
import type { ChunkMode } from "./chunk.ts";
import type { OutboundFileRef } from "../media/outbound.ts";

/** One reply chunk as the outbox hands it to a channel. */
export interface OutboundMessage {
  /** Stable id of this chunk (outbox row id); adapters pass it to the platform where an idempotency key exists. */
  id: string;
  route: ReplyRoute;
  /** Markdown as the model wrote it; the adapter formats it for the platform. */
  text: string;
  /** 0-based index of this chunk within its reply (for replyToMode "first"). */
  chunkIndex: number;
  /** Total chunks in this reply; the last chunk finishes any live preview/stream. */
  chunkCount: number;
  /**
   * What `progress` left behind for this run (preview message id, stream id, ack reaction), so the
   * final send can edit the preview or stop the stream instead of posting a second message.
   */
  progressState?: ProgressState;
  /** The run this chunk answers, if any (previews posted during the run are tagged with it). */
  runId?: string;
  /** When the chunk was queued (ms). No attempt to send it is older, so a lookup reads back no further. */
  queuedAt?: number;
  /**
   * When the chunk was first handed to the platform (absent before its first attempt). Whatever an
   * attempt created is no older, so a reconcile that reads history from here on cannot take an
   * identical earlier message for this chunk.
   */
  firstAttemptAt?: number;
  /**
   * The run ended without a reply that could take over its live preview (silent `NO_REPLY`, aborted):
   * post nothing; remove the run's preview or native stream (`progressState`), including one posted
   * but never recorded. `text` is empty.
   */
  retract?: boolean;
  /**
   * This row sends a file (issue 22, media out): what it is. `text` is its caption (may be empty).
   * The bytes come separately, to `sendFile`, loaded from the media store for that one call.
   */
  file?: OutboundFileRef;
}

/** A file row as `sendFile` gets it. */
export type OutboundFileMessage = OutboundMessage & { file: OutboundFileRef };

/**
 * What `reconcile` learnt about a send whose outcome was unknown: it landed (do not send again), it
 * is missing (safe to send), or it left no trace to look for — then it is sent again only when the
 * platform promises to drop a repeat (`idempotent`), otherwise the user is told once.
 */
export type ReconcileResult =
  | { outcome: "landed"; platformMessageId?: string }
  | { outcome: "missing" }
  | { outcome: "untraceable"; reason: string; idempotent: boolean };

/** Small per-run state a channel keeps between progress events; SessionDO persists it with the run. */
export type ProgressState = Record<string, string>;

export type SendResult =
  | { ok: true; platformMessageId?: string }
  /**
   * retryable: the platform said so (429, 5xx); retryAfterMs from Retry-After. `notSent`: the adapter
   * held the send back without making any request (a rate-limit bucket it knows is empty until
   * then): the outbox waits retryAfterMs and counts no attempt.
   */
  | { ok: false; retryable: boolean; retryAfterMs?: number; error: string; notSent?: true }
  /** The request may or may not have reached the platform (timeout, reset): reconcile, do not re-send blindly. */
  | { ok: false; outcomeUnknown: true; error: string };

export interface SendContext<Account = unknown> {
  env: Record<string, unknown>;
  config: EdgeclawConfig;
  /**
   * The settings in force for the account the call is for (its route's), resolved once by the
   * pipeline from the parsed `channels.<id>` block (channel-account.ts); undefined when the config
   * has no block for the channel. A channel never reads its block out of `config` itself.
   */
  account: Account | undefined;
  signal?: AbortSignal;
}

/** What a progress call gets beyond the send context: the run, and a way to record state mid-call. */
export interface ProgressContext<Account = unknown> extends SendContext<Account> {
  /** The run this progress belongs to (absent for `accepted`, which precedes any run). */
  runId?: string;
  /**
   * Stores `state` durably now, before the call goes on. An adapter records a pending post here
   * before making it, so a crash between the post and its recorded id leaves a trace to look for.
   */
  checkpoint?(state: ProgressState): void;
}

/** Lifecycle hints while the agent works (typing, ack reaction, status line). Failures are ignored. */
export type ProgressEvent =
  | { type: "accepted" }
  | { type: "run-started" }
  /** `text` is what arrived since the previous call (deltas are coalesced); `soFar` the reply until now. */
  | { type: "text-delta"; text: string; soFar: string }
  | { type: "tool"; name: string; phase: "start" | "end" }
  | { type: "run-finished" };

/**
 * What `fetchAttachment` answers: the file's text (cut at the source when `truncated`), the whole
 * file's bytes for media (images, audio, PDF: attachment-download.ts decides by the declared
 * type), or why there is none.
 */
export type FetchedAttachment =
  | { text: string; truncated?: boolean }
  | { bytes: Uint8Array }
  | { skipped: string };

/**
 * The outbound half of a channel. Every call gets the account it is for, resolved by the pipeline
 * (`account`, or `ctx.account`): undefined when the config has no block for the channel.
 */
export interface ChannelAdapter<Account = unknown> {
  /** Channel id as used in config (`channels.<id>`), session keys and routes. */
  readonly id: string;
  /** Largest chunk the platform takes; the outbox chunks replies to this unless config says less. */
  textChunkLimit(account: Account | undefined): number;
  /** How the outbox splits long replies (`newline` prefers paragraph breaks); default `length`. */
  chunkMode?(account: Account | undefined): ChunkMode;
  /** Most lines per chunk (Discord `maxLinesPerMessage`, 17), beside the character limit; unset = no line limit. */
  maxLinesPerChunk?(account: Account | undefined): number | undefined;
  /**
   * The platform drops a repeated send that carries the same idempotency key (LINE
   * `X-Line-Retry-Key`, Feishu `uuid`): `send` passes `message.id` (the outbox chunk id) as that key,
   * and a send whose outcome is unknown is simply sent again with it instead of reconciled. Leave
   * unset where the platform has no such key (Slack, Telegram): those reconcile.
   */
  idempotentSends?: boolean;
  /** Sends one chunk. Must not retry on its own: the outbox owns retries. */
  send(message: OutboundMessage, ctx: SendContext<Account>): Promise<SendResult>;
  /**
   * Uploads one file with the platform's own upload API (`bytes` are the file's, for this call
   * only), with `message.text` as its caption. Same rules as `send`: no retries of its own, and a
   * lost answer is `outcomeUnknown` (then `reconcile` is asked with the same message). A channel
   * without it cannot send files: a reply's file is then told in one line instead (reply-files.ts).
   */
  sendFile?(
    message: OutboundFileMessage,
    bytes: Uint8Array,
    ctx: SendContext<Account>,
  ): Promise<SendResult>;
  /**
   * The platform plays Ogg/Opus as a voice note (Telegram sendVoice, Feishu's audio message): a
   * voice reply (`tts`) is made as Opus and marked `voice` for it; elsewhere it is an audio file.
   */
  voiceNotes?: boolean;
  /** The largest file `sendFile` uploads (the platform's limit, or `mediaMaxMb`), in bytes. */
  maxFileBytes?(account: Account | undefined): number;
  /**
   * Why this file cannot go on this platform as the deployment stands (a type the platform does
   * not take, no public link to hand it), or undefined. Asked before the file is staged, so the
   * reply says so in its one line for the file instead of a dead letter later.
   */
  fileRefusal?(
    file: Pick<OutboundFileRef, "name" | "mimeType" | "sizeBytes">,
    ctx: SendContext<Account>,
  ): string | undefined;
  /**
   * Where to tell a sender their event was turned away (access, pairing pending, command not
   * authorized), or undefined to stay silent — the default everywhere, since a stranger must not make
   * the bot speak. Only a platform that holds the sender in a pending state until the bot answers
   * (Discord's deferred interaction: "thinking…" for 15 minutes) names a route here, and the refusal
   * sent on it is seen by that sender alone.
   */
  refusalRoute?(route: ReplyRoute): ReplyRoute | undefined;
  /**
   * Called when a send's outcome is unknown: finds out whether the message reached the platform
   * (e.g. by a marker in its history since `message.queuedAt`). Throws when it cannot tell right now.
   */
  reconcile?(message: OutboundMessage, ctx: SendContext<Account>): Promise<ReconcileResult>;
  /**
   * Whether `reconcile` can always tell for this chunk if it reached the platform: it answers
   * "landed" or "missing" (or "untraceable" with `idempotent`), never "untraceable" and not
   * idempotent, judged from what is known when the chunk is queued. Such a chunk is queued as
   * possibly attempted, so its first send needs no durable mark before it: after a crash it is
   * reconciled first, and "missing" sends it once. Unset (or false): the chunk is marked "sending"
   * durably before its first send, as a chunk reconcile could not trace must be.
   */
  reconcilesChunk?(
    chunk: Pick<OutboundMessage, "route" | "chunkIndex" | "chunkCount" | "retract" | "file">,
  ): boolean;
  /**
   * Downloads an inbound attachment the model may read (text-like files), with the channel's own
   * credentials and size bound. Called after access control, never on the ack path. Returns the
   * text (`truncated` when only its beginning was downloaded), or a short reason it was not read.
   */
  fetchAttachment?(
    attachment: InboundAttachment,
    route: ReplyRoute,
    ctx: SendContext<Account>,
  ): Promise<FetchedAttachment>;
  /**
   * Whether the agent has posted in the thread `route.threadId` (thread participation counts as a
   * mention in gated groups). Asked only for unmentioned thread messages in groups.
   */
  participatedInThread?(route: ReplyRoute, ctx: SendContext<Account>): Promise<boolean>;
  /**
   * Optional live progress (typing, reactions, streaming previews). Receives the run's state and
   * returns it updated; failures must not throw (progress is best effort, the reply is not).
   */
  progress?(
    route: ReplyRoute,
    event: ProgressEvent,
    state: ProgressState,
    ctx: ProgressContext<Account>,
  ): Promise<ProgressState>;
}
