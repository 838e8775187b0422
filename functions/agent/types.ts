import type { EdgeclawConfig } from "../config/schema.ts";
import type { ExecHost } from "../sandbox/exec-host.ts";
import { EdgeclawError } from "../core/errors.ts";
import type { InlineDocument, InlineImage, MediaPart } from "../media/parts.ts";
import type { ThinkLevel } from "../config/agents-schema.ts";

/** The agent loop's own message model: provider adapters translate to and from their wire formats. */

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed JSON arguments; a provider that sends unparsable JSON yields `{ _raw: "<text>" }`. */
  arguments: Record<string, unknown>;
  /**
   * Gemini's `thoughtSignature` on this call's part: Gemini 3 refuses a tool round whose calls come
   * back without it, so it is kept with the call and sent back only to Gemini.
   */
  thoughtSignature?: string;
}

export type Message =
  | {
      role: "user";
      content: string;
      /** Images, audio and documents the sender attached: references into the media store. */
      media?: MediaPart[];
      /**
       * The pixels of this turn's images, loaded for one model request (functions/agent/media-request.ts)
       * and never stored: a transcript row holds `media` only.
       */
      images?: InlineImage[];
      /** PDFs without a text layer, for a model that reads them natively (document-request.ts). */
      documents?: InlineDocument[];
    }
  | {
      role: "assistant";
      content: string;
      toolCalls?: ToolCall[];
      /**
       * The model's thinking before this answer, in order. Anthropic's signed blocks go back to it
       * unchanged with the tool results that follow (its API requires that); unsigned reasoning
       * (OpenAI-compatible `reasoning_content`) is kept only to show with /reasoning.
       */
      thinking?: ThinkingBlock[];
    }
  | {
      role: "tool";
      toolCallId: string;
      name: string;
      content: string;
      isError?: boolean;
      /**
       * Images the tool produced (a browser screenshot), as references into the media store. A
       * model with image input sees them (functions/agent/media-request.ts); `content` names them.
       */
      media?: MediaPart[];
    };

/** One block of a model's thinking: readable text with its signature, or an encrypted (redacted) block. */
export type ThinkingBlock =
  | { type: "thinking"; text: string; signature?: string }
  | { type: "redacted"; data: string };

/** JSON Schema of a tool's parameters, as both Anthropic and OpenAI take it. */
export type JsonSchema = {
  type: "object";
  properties: Record<string, unknown>;
  required?: string[];
  additionalProperties?: boolean;
};

export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ModelRequest {
  system: string;
  /**
   * Where `system` stops being the same from turn to turn (the prompt's cache boundary): a
   * provider that caches puts its breakpoint there, so the time and runtime lines below it do not
   * invalidate the cached prefix.
   */
  systemCacheBoundary?: number;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens?: number;
  /** The run's thinking level (tools/thinking); each adapter maps it to what the model takes. */
  thinkLevel?: ThinkLevel;
  signal?: AbortSignal;
  /** Called for every streamed text fragment, in order. */
  onTextDelta?: (text: string) => void;
}

export interface ModelResult {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  stopReason: "end" | "tool_use" | "max_tokens" | "other";
  /** The answer's thinking blocks, when the model thought and said so. */
  thinking?: ThinkingBlock[];
  /** The `provider/model` ref that actually answered (after failover). */
  modelRef: string;
}

export type ModelErrorKind =
  | "rate_limit"
  | "overloaded"
  | "server"
  | "timeout"
  | "network"
  | "auth"
  | "billing"
  | "bad_request"
  | "context_overflow"
  | "not_configured"
  /** A budget (config `budgets`) has no room for this call's worst case: stop, never retry or fail over. */
  | "budget"
  | "aborted";

/** The kinds worth another try (concepts/retry): model-retry.ts retries exactly these. */
export const RETRYABLE_MODEL_ERRORS: ReadonlySet<ModelErrorKind> = new Set([
  "rate_limit",
  "overloaded",
  "server",
  "timeout",
  "network",
]);

/**
 * A model call that failed; `kind` decides retry and failover, and so its class: a retryable kind
 * is transient, and so is an aborted call (an eviction or /stop cut it short, not the request);
 * every other kind fails the same way again (bad request, auth, budget, …).
 */
export class ModelError extends EdgeclawError {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status?: number,
    retryAfterMs?: number,
  ) {
    super(
      kind === "aborted" || RETRYABLE_MODEL_ERRORS.has(kind) ? "transient" : "permanent",
      message,
      { retryAfterMs },
    );
  }
}

/** What a tool may use. Tools get no secrets: only what the context hands them. */
export interface ToolContext {
  env: Record<string, unknown>;
  config: EdgeclawConfig;
  agentId: string;
  sessionKey: string;
  sessionId: string;
  /** The sender is the owner (commands.ownerAllowFrom); owner-only tools check this. */
  senderIsOwner: boolean;
  /**
   * The owner's own private chat (`isMainPrivateSession`): only then may the file tools touch
   * MEMORY.md and memory/, exactly as only then is MEMORY.md in the system prompt.
   */
  mainPrivateSession: boolean;
  signal?: AbortSignal;
  /** The id of the tool call being executed (set by the loop): what keys a side effect. */
  toolCallId?: string;
  /** The session's sandbox commands (exec, process); absent where no sandbox backend is set. */
  exec?: ExecHost;
  /**
   * The session's meter for a kind of paid call a tool makes (the browser's time: kind "browser"),
   * admitted against the budgets before it starts; absent outside a session (no one to bill).
   */
  meterFor?: (kind: string) => ToolCallMeter;
  /** A snapshot of the session for session_status. */
  status: () => Promise<Record<string, unknown>>;
}

/**
 * What a tool sees of the session's meter: functions/agent/metering.ts's `ModelCallMeter` (admit
 * a `MeterStart`, settle a `MeterOutcome`), spelled out by shape because metering.ts is built on
 * this file's types (importing it here would be a cycle).
 */
export interface ToolCallMeter {
  admit(start: object): Promise<{ id: string; startedAt: number }>;
  settle(ticket: { id: string; startedAt: number }, start: object, outcome: object): Promise<void>;
}

export interface ToolResult {
  content: string;
  isError?: boolean;
  /** Images it stored in the media store, for a model that takes image input (a screenshot). */
  media?: MediaPart[];
}

export interface AgentTool extends ToolSpec {
  /** Refused to non-owners whatever else the config says (cron, gateway). */
  ownerOnly?: boolean;
  /** A successful call ends the turn without a reply after its batch (sessions_yield). */
  endsTurn?: boolean;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
