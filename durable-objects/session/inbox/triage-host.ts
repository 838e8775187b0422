import type { Env } from "../../env.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import type { ModelCallKind, ModelCallMeter } from "../../../functions/agent/metering.ts";
import type {
  SessionControl,
  SessionSettings,
} from "../../../functions/commands/session-control.ts";
import type { RunEvent } from "../../session-api.ts";
import type { InboxRow, SessionStore } from "../storage.ts";
import type { TriagedMessage } from "./store.ts";

/**
 * What triage may do to its session (triage.ts, automation.ts); the pass builds it from the
 * session's state (triage-pass.ts). Its own file, so the two triage steps do not import each other.
 */
export interface TriageHost {
  env: Env;
  config: EdgeclawConfig;
  store: SessionStore;
  activeRun: { runId: string } | null;
  settings(): SessionSettings;
  control: SessionControl;
  rotateSession(reason: string): void;
  abortActiveRun(reason: string): void;
  /**
   * Sends `texts` once through the outbox (chat platforms) and to HTTP listeners; settles the event
   * when `settle`. `private` keeps the exchange out of the session's web-chat history: a pairing
   * code answers a stranger, whose words are not this conversation's.
   */
  reply(row: InboxRow, texts: string[], settle: boolean, opts?: { private?: boolean }): void;
  emit(seq: number, event: RunEvent): void;
  progressAccepted(row: InboxRow): Promise<void>;
  /**
   * new → queued with what triage decided (one write); with `holdForRun`, the pass holds it in
   * memory instead and, when it ends, starts its run with it in one write when the run can start
   * at once (nothing queued, no run active), else queues it then (triage-pass.ts).
   */
  queue(triaged: TriagedMessage, holdForRun: boolean): void;
  /** Settles a turned-away event and queues `text` once on `route` (a channel's refusal route). */
  refuse(row: InboxRow, route: ReplyRoute, text: string): void;
  /** The meter of a model call this event makes before any run (a voice note's transcription). */
  meterFor(row: InboxRow, kind: ModelCallKind): ModelCallMeter;
  /** Counts an event the access policy turned away (metrics). */
  refused(row: InboxRow, reason: "access_denied" | "pairing"): void;
}
