import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import type { ReplyRoute } from "../../../functions/core/envelope.ts";
import type { InboxRow } from "../storage.ts";
import type { SessionSettings } from "../../../functions/commands/session-control.ts";
import { queuePolicy } from "../inbox/queue-policy.ts";
import { composeTurnText, type IncomingText } from "../../../functions/agent/turn-text.ts";
import type { MediaPart } from "../../../functions/media/parts.ts";
import type { ToolSpec } from "../../../functions/agent/types.ts";

/** What the next run answers, decided from the queued events and the queue mode. */
export interface RunPlan {
  seqs: number[];
  /** Queued events a newer one replaced (interrupt): settled without an answer of their own. */
  superseded: number[];
  /** Replies go where the newest message came from. */
  route: ReplyRoute;
  model?: string;
  senderIsOwner: boolean;
  oneShot?: Record<string, string>;
  /** An automation's own wall-time budget (cron job, heartbeat, hook). */
  timeoutSeconds?: number;
  /** Metered as a heartbeat, cron or hook run instead of a turn. */
  callKind?: string;
  /** At least one trigger is a real user message (system events do not refresh idle timers). */
  isUserMessage: boolean;
  composeText(context: RunContext): string;
  /** The media the triggering messages carry (references into the media store), in order. */
  media: MediaPart[];
  /** /v1/responses: the caller's function tools (the newest message's). */
  clientTools?: ToolSpec[];
}

/** What the session kept for its next run besides the triggering messages. */
export interface RunContext {
  /** Un-mentioned group messages (decideAccess → history-only). */
  groupHistory: Array<{ sender: string; text: string }>;
  /** Queued messages dropped by `messages.queue.drop: "summarize"`. */
  droppedSummary?: string[];
  /** Allowed system events (edits, reactions, joins, …), oldest first. */
  systemEvents?: Array<{ text: string }>;
}

/**
 * Chooses the events for the next run, or undefined while a queue debounce is still running.
 * `followup` answers one queued message per run; `collect` and `steer` (messages that missed the
 * run they could have steered) merge everything queued for the same conversation target;
 * `interrupt` answers only the newest message.
 */
export function prepareRun(args: {
  queued: InboxRow[];
  config: EdgeclawConfig;
  settings: SessionSettings;
  now: number;
}): RunPlan | undefined {
  const { queued, config, settings, now } = args;
  const first = queued[0];
  if (!first) return undefined;
  if (now < queueReadyAt(queued, config, settings)) return undefined;
  const { mode } = queuePolicy(config, settings, first.event.envelope.channel);

  let chosen: InboxRow[];
  let superseded: InboxRow[] = [];
  if (mode === "followup") {
    chosen = [first];
  } else if (mode === "interrupt") {
    chosen = [queued.at(-1)!];
    superseded = queued.slice(0, -1);
  } else {
    const target = routeTarget(first.event.envelope.route);
    chosen = queued.filter((row) => routeTarget(row.event.envelope.route) === target);
  }
  const last = chosen.at(-1)!;
  const messages = chosen.map(incomingText);
  return {
    seqs: chosen.map((row) => row.seq),
    superseded: superseded.map((row) => row.seq),
    // Several messages answered at once: channels with replyToMode "batched" thread such replies.
    route:
      chosen.length > 1
        ? {
            ...last.event.envelope.route,
            extra: { ...last.event.envelope.route.extra, batched: "true" },
          }
        : (last.prepared?.route ?? last.event.envelope.route),
    model: settings.modelOverride ?? last.event.overrides?.model,
    senderIsOwner: chosen.some((row) => row.prepared?.senderIsOwner),
    oneShot: Object.assign({}, ...chosen.map((row) => row.prepared?.oneShot ?? {})) as Record<
      string,
      string
    >,
    timeoutSeconds: last.event.automation?.timeoutSeconds,
    clientTools: last.event.clientTools,
    callKind: last.event.automation?.source,
    // Heartbeats, cron and hook turns never extend the session's idle/daily freshness.
    isUserMessage: chosen.some(
      (row) => row.event.envelope.kind === "message" && !row.event.automation,
    ),
    composeText({ groupHistory, droppedSummary, systemEvents }) {
      return composeTurnText({ messages, groupHistory, droppedSummary, systemEvents });
    },
    media: messages.flatMap((message) =>
      (message.attachments ?? []).flatMap((attachment) =>
        attachment.media ? [attachment.media] : [],
      ),
    ),
  };
}

/** A queued event's message for the model (rows prepared before fencing existed carry only text). */
export function incomingText(row: InboxRow): IncomingText {
  return row.prepared ?? { text: row.event.envelope.text };
}

/**
 * When the queued events may start a run: at once, unless they queued up behind a run, when the
 * queue debounce waits for the newest of them to settle (interrupt never waits). The alarm schedule
 * and prepareRun both read this, so what is due and what runs cannot disagree.
 */
export function queueReadyAt(
  queued: InboxRow[],
  config: EdgeclawConfig,
  settings: SessionSettings,
): number {
  const first = queued[0];
  if (!first) return Number.POSITIVE_INFINITY;
  const { mode, debounceMs } = queuePolicy(config, settings, first.event.envelope.channel);
  const behindRun = queued.some((row) => row.prepared?.queuedBehindRun);
  if (!behindRun || mode === "interrupt") return first.receivedAt;
  return Math.max(...queued.map((row) => row.receivedAt)) + debounceMs;
}

/** Where a reply lands: messages are merged into one turn (collect, steer) only when this is equal. */
export function routeTarget(route: ReplyRoute): string {
  return `${route.channel}|${route.accountId}|${route.to}|${route.threadId ?? ""}`;
}
