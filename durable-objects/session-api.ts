import type { SandboxReport } from "../functions/sandbox/report.ts";
import type { InboundEnvelope } from "../functions/core/envelope.ts";
import type { ToolSpec, Usage } from "../functions/agent/types.ts";
import type {
  OnBehalfOf,
  PostAnswer,
  PostedMessage,
  SentReply,
  SubagentAdminRow,
  SubagentParent,
  SubagentReport,
} from "./session/subagents/shapes.ts";

/** An inbound event after routing: which agent and session it belongs to. */
export interface RoutedEvent {
  envelope: InboundEnvelope;
  agentId: string;
  sessionKey: string;
  /** Per-request overrides from HTTP callers (x-openclaw-model, …); never from chat platforms. */
  overrides?: { model?: string };
  /**
   * /v1/responses only: the caller's own function tools. The model may call them; the run never
   * executes one, it waits for the caller's result (session/responses/client-tools.ts).
   */
  clientTools?: ToolSpec[];
  /** /v1/responses with previous_response_id: the session's reset policy does not start it over. */
  continuesResponse?: true;
  /** Set only by the gateway's own scheduler and hook endpoint (never from a channel): see AutomationTrigger. */
  automation?: AutomationTrigger;
}

/**
 * What woke the agent when it was not a chat message: a cron job, the heartbeat, an inbound hook.
 * `agent-turn` is an unattended run (isolated cron job, hook); `system-event` is context queued for
 * the next run (main-session cron job, hook wake) and never starts a run itself; `heartbeat` is a
 * heartbeat turn in the main session, skipped while the session is busy.
 */
export interface AutomationTrigger {
  source: "cron" | "heartbeat" | "hook" | "exec" | "subagent";
  action: "agent-turn" | "system-event" | "heartbeat";
  /** cron: the job and the run (cron_runs.id) this event is; its result is reported under that id. */
  jobId?: string;
  cronRunId?: string;
  deleteAfterRun?: boolean;
  timeoutSeconds?: number;
  /** hooks: the text came from a third party; fenced under this label. */
  untrustedSource?: string;
  /** heartbeat: the reply contract and the cause (scheduled beats skip a busy session; a wake too). */
  heartbeat?: { ackMaxChars: number; reason: "interval" | "wake" };
  /** An isolated turn starts a fresh transcript. */
  freshSession?: boolean;
  /** subagent: a child's task (in the child) or a child's report (in its parent). */
  subagent?:
    | { kind: "task"; parent: SubagentParent; forkContext?: string }
    | { kind: "announce"; report: SubagentReport }
    /** sessions_send: another session's message, its sender's ownership as it was. */
    | { kind: "message"; fromKey: string; senderIsOwner: boolean };
  /** The person this unattended run works for (a child, its report): metered under their sender scope. */
  onBehalfOf?: OnBehalfOf;
}

export type AcceptResult = { status: "accepted" | "duplicate" };

/**
 * What a session did with one accepted event, for operators and `edgeclaw simulate`
 * (GET /admin/sessions/:key/events/:dedupKey). `pending`: triage has not looked at it yet;
 * `accepted`: queued for a run or answered by one; `failed`: dead-lettered. `configKey` is the key
 * that would change a refusal.
 */
export interface EventDecision {
  dedupKey: string;
  state: "new" | "queued" | "taken" | "settled";
  outcome:
    | "pending"
    | "accepted"
    | "pairing"
    | "refused"
    | "no-mention"
    | "context"
    | "command"
    | "failed";
  reason?: string;
  configKey?: string;
}

/** Something a session gave up on: an undeliverable reply chunk, or an inbound event that failed for good. */
export interface DeadLetter {
  kind: "reply" | "event";
  /** The outbox chunk id, or the event's dedup key. */
  id: string;
  channel: string;
  to: string;
  text: string;
  error: string | null;
  attempts: number;
  /** When the event arrived, or the chunk was queued (ms). */
  at: number;
  /** Reply chunks can be sent again; events only discarded (their sender was told once already). */
  retryable: boolean;
}

/** The answer to an operator's retry or discard of one dead letter. */
export type DeadLetterActionResult =
  | { ok: true; kind: "reply" | "event"; id: string; state: "pending" | "unknown" | "discarded" }
  | { ok: false; status: 404 | 409; reason: string };

/**
 * What a run reports while it works. The OpenAI API and the web chat turn these into SSE; channel
 * adapters see them as ProgressEvents.
 */
export type RunEvent =
  | { type: "queued" }
  | { type: "run-started"; runId: string }
  | { type: "text-delta"; text: string }
  /** Text streamed so far came from a model attempt that then failed; a retry/fallback streams anew. */
  | { type: "text-reset" }
  | {
      type: "tool";
      callId: string;
      name: string;
      phase: "start" | "end";
      isError?: boolean;
      preview?: string;
    }
  /** A reply that needs no model (command answer, pairing notice). */
  | { type: "notice"; text: string }
  | {
      type: "done";
      runId: string;
      text: string;
      usage: Usage;
      modelRef: string;
      /** The web chat's files of this answer (`MEDIA:` lines, the voice reply), as signed links. */
      media?: WebMedia[];
      /** The run waits for the caller's results of these client function calls (/v1/responses). */
      clientToolCalls?: ClientToolCall[];
    }
  | { type: "error"; message: string; code?: string };

/** A call of one of the caller's function tools, answered by the caller (/v1/responses). */
export interface ClientToolCall {
  callId: string;
  name: string;
  /** The model's arguments as JSON text, as OpenAI's function_call item carries them. */
  arguments: string;
}

/**
 * One /v1/responses request as the session takes it (SessionRpc.respond). `scope` is who may
 * continue the response (agent, user, session header): a follow-up from another scope is told
 * the previous id does not exist.
 */
export interface ResponsesTurn {
  event: RoutedEvent;
  /** The id the Worker drew for this response; a retry of a recorded one gets the recorded id. */
  responseId: string;
  scope: string;
  previousResponseId?: string;
  /** function_call_output items: the caller's results for the previous response's calls. */
  toolOutputs?: Array<{ callId: string; output: string }>;
}

/** What respond() answers: the response's id and its events, or why it was refused (nothing stored). */
export type ResponsesAnswer =
  | {
      ok: true;
      id: string;
      createdAt: number;
      previousResponseId: string | null;
      events: ReadableStream<Uint8Array>;
    }
  | { ok: false; status: 400 | 404 | 409; code: string; message: string; param: string | null };

/**
 * One entry of the web chat's history: a turn the web chat shows beside the transcript (a command
 * and its answer, a notice: outbox/display-log.ts), or a transcript turn whose answer names the
 * model that gave it.
 */
export interface HistoryEntry {
  role: "user" | "assistant";
  text: string;
  at: number;
  /** Said in place of an answer (a failed run): shown as a notice, not as the agent's reply. */
  notice?: true;
  model?: string;
  /** Files of this turn: an image the operator attached, a file or voice reply the agent sent. */
  media?: WebMedia[];
}

/** A file the web chat shows: a signed link to this Worker's media route (workers/media.ts). */
export interface WebMedia {
  url: string;
  name: string;
  mimeType: string;
}

/**
 * What a SessionDO answers over RPC (session.ts implements it). The Env types SESSIONS with this,
 * not with the class, so no type cycle runs from the Env through the session's code.
 */
export interface SessionRpc extends Rpc.DurableObjectBranded {
  /** Stores the event (idempotent by its dedup key). Durable when this returns. */
  accept(event: RoutedEvent): Promise<AcceptResult>;
  /** Accepts the event and streams NDJSON RunEvents until the run answering it ends. */
  chat(event: RoutedEvent): Promise<ReadableStream<Uint8Array>>;
  /**
   * A /v1/responses turn: checks previous_response_id, then accepts the event (or resumes the run
   * waiting for these function call outputs) with its response record, and streams its RunEvents.
   */
  respond(turn: ResponsesTurn): Promise<ResponsesAnswer>;
  history(limit?: number): Promise<HistoryEntry[]>;
  adminReset(): Promise<{ sessionId: string }>;
  deadLetters(): Promise<DeadLetter[]>;
  eventDecision(dedupKey: string): Promise<EventDecision | null>;
  retryDeadLetter(id: string): Promise<DeadLetterActionResult>;
  discardDeadLetter(id: string): Promise<DeadLetterActionResult>;
  /** The session's sandbox for operators (functions/sandbox/report.ts). */
  sandbox(): Promise<SandboxReport>;
  /**
   * An operator's answer to a command waiting for approval (the control page; /approve in the
   * chat is the owner's): the same decision, start and audit record as /approve. The reply text.
   */
  decideExec(id: string, decision: "allow-once" | "deny", approver: string): Promise<string>;
  /** A sub-agent session asked by its parent to stop (subagents/kill.ts); it still reports once. */
  stopSubagent(reason: string): Promise<string>;
  /** Where another session's sessions_send message stands here: settled with its reply, or not yet. */
  sentReply(dedupKey: string): Promise<SentReply | null>;
  /** This session's sub-agents (running, and ended ones it still keeps) for the control page. */
  subagents(): Promise<SubagentAdminRow[]>;
  /** The message tool of another session: text and files into this conversation's outbox, once per id. */
  postMessage(message: PostedMessage): Promise<PostAnswer>;
}
