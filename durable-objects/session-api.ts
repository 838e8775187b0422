import type { InboundEnvelope } from "../functions/channels/envelope.ts";
import type { Usage } from "../functions/agent/types.ts";

/** An inbound event after routing: which agent and session it belongs to. */
export interface RoutedEvent {
  envelope: InboundEnvelope;
  agentId: string;
  sessionKey: string;
  /** Per-request overrides from HTTP callers (x-openclaw-model, …); never from chat platforms. */
  overrides?: { model?: string };
}

export type AcceptResult = { status: "accepted" | "duplicate" };

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
}

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
  | { type: "tool"; callId: string; name: string; phase: "start" | "end"; isError?: boolean; preview?: string }
  /** A reply that needs no model (command answer, pairing notice). */
  | { type: "notice"; text: string }
  | { type: "done"; runId: string; text: string; usage: Usage; modelRef: string }
  | { type: "error"; message: string; code?: string };
