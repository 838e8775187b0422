import { createLogger } from "../../../functions/logging/logger.ts";
import type { EdgeclawConfig } from "../../../functions/config/schema.ts";
import { adapterFor, HTTP_CHANNELS } from "../../../functions/channels/registry.ts";
import {
  describeAttachments,
  MAX_ATTACHMENT_CHARS,
} from "../../../functions/channels/attachments.ts";
import { intakeConfig } from "../../../functions/media/ingest.ts";
import { readDocument } from "../../../functions/agent/read-document.ts";
import { mediaKey, mediaStoreFor } from "../../../functions/media/store.ts";
import type { MediaPart } from "../../../functions/media/parts.ts";
import { transcribeAudio, voiceNoteNotice } from "../../../functions/agent/transcribe.ts";
import { sendContextFor } from "../../../functions/channels/channel-account.ts";
import {
  decideAccess,
  OPERATOR_ACCESS,
  type AccessDecision,
} from "../../../functions/routing/access.ts";
import { postgresAccessStore } from "../../../functions/routing/access-store-postgres.ts";
import { configOnlyAccessStore } from "../../../functions/routing/access-store-config-only.ts";
import { resolveHistoryLimit, senderLabel } from "../../../functions/routing/group-history.ts";
import { resolveResetPolicy, sessionResetDue } from "../../../functions/routing/session-reset.ts";
import { handleCommandMessage } from "../../../functions/commands/execute.ts";
import { withDb } from "../../../functions/db/client.ts";
import { queuePolicy } from "./queue-policy.ts";
import { queueSystemEvent } from "./system-events.ts";
import { triageAutomation } from "./automation.ts";
import type { InboxRow } from "../storage.ts";
import type { TriageHost } from "./triage-host.ts";
import { lastInteractionAt, recordInbound } from "../last-inbound.ts";

/**
 * Decides what a newly accepted event becomes: dropped, answered without the model (pairing code,
 * command, directive), kept as group context, or queued for a run — and applies the queue mode when
 * a run is already active (steer waits for the next boundary, interrupt aborts the run, cap/drop
 * bound the queue). Runs inside the SessionDO after the ack, so it may read Postgres.
 */
export async function triageInbound(row: InboxRow, host: TriageHost): Promise<void> {
  const { envelope, agentId, sessionKey } = row.event;
  // The gateway's own events (cron, heartbeat, hooks): authenticated where they were raised.
  if (row.event.automation) return triageAutomation(row, row.event.automation, host);
  const decision = await accessFor(row, host);
  const now = Date.now();
  switch (decision.kind) {
    case "drop":
      host.store.inbox.decide(row.seq, {
        outcome: "refused",
        reason: decision.reason,
        ...(decision.configKey ? { configKey: decision.configKey } : {}),
      });
      host.refused(row, "access_denied");
      settleTurnedAway(row, host, now);
      logRefusalOnce(row, host, decision.reason, decision.configKey);
      host.emit(row.seq, {
        type: "error",
        code: "dropped",
        message: decision.configKey
          ? `${decision.reason} (${decision.configKey})`
          : decision.reason,
      });
      return;
    case "pairing":
      host.store.inbox.decide(row.seq, {
        outcome: "pairing",
        reason: `the sender is not allowed yet (dmPolicy pairing): a pairing code was sent`,
        configKey: `channels.${envelope.channel}.allowFrom`,
      });
      host.refused(row, "pairing");
      host.reply(row, [decision.replyText], true, { private: true });
      return;
    case "history-only": {
      // The post's mentioned twin (Slack's app_mention) may have arrived while access was decided.
      const fresh = host.store.inbox.bySeq(row.seq);
      if (!envelope.wasMentioned && fresh?.state === "new" && fresh.event.envelope?.wasMentioned)
        return triageInbound(fresh, host);
      host.store.inbox.decide(row.seq, {
        outcome: "no-mention",
        reason: "the bot was not mentioned: kept as group context, no run",
        configKey: `channels.${envelope.channel}.requireMention`,
      });
      host.store.groupHistory.push(
        senderLabel(envelope),
        envelope.text,
        envelope.receivedAt,
        historyLimit(host.config, row),
      );
      host.store.inbox.settle(row.seq, null, now);
      host.emit(row.seq, {
        type: "error",
        code: "history-only",
        message: "kept as group context (no mention)",
      });
      return;
    }
    case "allow":
      break;
  }

  if (envelope.kind === "system") {
    // Context for the next run, nothing more: no run, no model call, no reply, no ack reaction.
    host.store.inbox.decide(row.seq, {
      outcome: "context",
      reason: "a system event: kept as context for the next run",
    });
    queueSystemEvent(
      host.store,
      { text: envelope.text, at: envelope.receivedAt },
      host.config.messages.systemEvents.maxQueued,
    );
    host.store.inbox.settle(row.seq, null, now);
    host.emit(row.seq, {
      type: "error",
      code: "system-event",
      message: "kept as context for the next run",
    });
    return;
  }

  resetIfStale(row, host, now);

  const outcome = await handleCommandMessage(
    envelope.text,
    { commandAuthorized: decision.commandAuthorized },
    host.control,
    {
      config: host.config,
      agentId,
      sessionKey,
      sender: {
        channel: envelope.channel,
        accountId: envelope.accountId,
        senderId: envelope.senderId,
        senderName: envelope.senderName,
        chatType: envelope.chatType,
      },
      senderIsOwner: decision.senderIsOwner,
      now,
      route: envelope.route,
    },
  );
  if (outcome.action === "drop") {
    host.store.inbox.decide(row.seq, { outcome: "refused", reason: "command not authorized" });
    // An unauthorized command-only message is ignored silently (tools/slash-commands), unless the
    // platform keeps its sender waiting for an answer (a Discord slash command): then "not authorized".
    settleTurnedAway(row, host, Date.now());
    host.emit(row.seq, { type: "error", code: "dropped", message: "command not authorized" });
    return;
  }
  if (outcome.action === "reply") {
    host.store.inbox.decide(row.seq, { outcome: "command", reason: "answered by a command" });
    host.reply(row, outcome.replies.length ? outcome.replies : ["✅"], true);
    return;
  }
  if (outcome.replies.length) host.reply(row, outcome.replies, false);
  const text = outcome.text;
  const oneShot: Record<string, string> = Object.fromEntries(
    Object.entries(outcome.oneShot).flatMap(([key, value]) =>
      typeof value === "string" ? [[key, value]] : [],
    ),
  );

  const files = await describeAttachments(
    envelope.attachments,
    adapterFor(envelope.channel),
    envelope.route,
    sendContextFor(
      { env: host.env, config: host.config, signal: AbortSignal.timeout(30_000) },
      envelope.route,
    ),
    mediaIntake(host, row, agentId, sessionKey),
  );
  // A voice note that could not be heard is said to its sender in one line, never silence.
  const unheard = files.find((file) => file.transcriptionError !== undefined);
  if (unheard) host.reply(row, [voiceNoteNotice(unheard.transcriptionError!)], false);
  host.store.inbox.prepare(
    row.seq,
    {
      text,
      // A channel sender's words are third-party text: the run fences them (functions/agent/turn-text.ts).
      from: HTTP_CHANNELS.has(envelope.channel)
        ? undefined
        : { channel: envelope.channel, chatType: envelope.chatType, label: senderLabel(envelope) },
      attachments: files.length ? files : undefined,
      senderIsOwner: decision.senderIsOwner,
      oneShot,
      queuedBehindRun: host.activeRun !== null,
    },
    { outcome: "accepted" },
  );
  // Heartbeats, cron and hook events never get here (triageAutomation): only a person's message
  // extends the session's idle/daily freshness.
  recordInbound(
    host.store.meta,
    envelope.route,
    envelope.kind === "message" ? Date.now() : undefined,
  );
  host.store.meta.set("chatType", envelope.chatType);
  await host.progressAccepted(row);
  if (host.activeRun) applyQueueMode(row, host);
}

/**
 * Where this event's images, audio and documents go: the media store, after access control (this
 * runs only for an allowed message), under keys of this agent, session and event.
 */
function mediaIntake(host: TriageHost, row: InboxRow, agentId: string, sessionKey: string) {
  const eventKey = row.event.envelope.dedupKey;
  const store = mediaStoreFor(host.env as Record<string, unknown>);
  if (!store) return undefined;
  return {
    store,
    config: intakeConfig(host.config.tools.media, host.config.agents.defaults.pdfMaxMb),
    keyFor: (index: number) => mediaKey(agentId, sessionKey, eventKey, index),
    transcribe: async (bytes: Uint8Array, part: MediaPart) =>
      transcribeAudio({
        bytes,
        mimeType: part.mimeType,
        config: host.config,
        env: host.env,
        meter: host.meterFor(row, "transcription"),
      }),
    readDocument: async (bytes: Uint8Array, part: MediaPart) =>
      readDocument({
        bytes,
        name: part.name ?? "document.pdf",
        env: host.env as Record<string, unknown>,
        maxChars: MAX_ATTACHMENT_CHARS,
        timeoutMs: DOCUMENT_READ_TIMEOUT_MS,
      }),
  };
}

/** One PDF's conversion; past it the PDF is kept without text (a native reader still gets it). */
const DOCUMENT_READ_TIMEOUT_MS = 60_000;

/** What a sender kept waiting by the platform is told when their event is turned away (OpenClaw: "not authorized"). */
export const NOT_AUTHORIZED_TEXT = "⛔ Not authorized: you cannot use this here.";

/**
 * Tells the operator's terminal why a conversation gets no reply: once per conversation and
 * reason (a busy group that is not allowlisted must not fill the log with a line per message).
 * The sender's text stays out of the line.
 */
function logRefusalOnce(row: InboxRow, host: TriageHost, reason: string, configKey?: string) {
  const seen = `${reason}|${configKey ?? ""}`;
  if (host.store.meta.getJson("refusalLogged") === seen) return;
  host.store.meta.setJson("refusalLogged", seen);
  const { envelope } = row.event;
  createLogger(host.config, host.env as Record<string, unknown>, {
    sessionKey: row.event.sessionKey,
  }).warn("message refused by access policy; later refusals here are not logged", {
    channel: envelope.channel,
    chatType: envelope.chatType,
    reason,
    ...(configKey ? { configKey } : {}),
  });
}

/**
 * Ends an event that was turned away. Silent by default (a stranger must not make the bot speak);
 * a channel whose platform shows the sender a pending state until the bot answers names a private
 * route for the refusal (ChannelAdapter.refusalRoute), and it is sent there once.
 */
function settleTurnedAway(row: InboxRow, host: TriageHost, now: number): void {
  const { envelope } = row.event;
  const route = HTTP_CHANNELS.has(envelope.channel)
    ? undefined
    : adapterFor(envelope.channel)?.refusalRoute?.(envelope.route);
  if (route) host.refuse(row, route, NOT_AUTHORIZED_TEXT);
  else host.store.inbox.settle(row.seq, null, now);
}

async function accessFor(row: InboxRow, host: TriageHost): Promise<AccessDecision> {
  const { agentId } = row.event;
  let { envelope } = row.event;
  // Web chat and the OpenAI API are authenticated by the gateway token: the caller is the operator.
  if (HTTP_CHANNELS.has(envelope.channel)) return OPERATOR_ACCESS;
  // Thread participation: in a thread the agent has already answered in, a follow-up counts as a
  // mention (mention gating only; sender and group allowlists still apply).
  if (
    envelope.threadId &&
    envelope.chatType !== "direct" &&
    !envelope.wasMentioned &&
    (await participatedInThread(row, host))
  ) {
    envelope = { ...envelope, wasMentioned: true };
  }
  return withDb(host.env, (db) =>
    decideAccess({
      config: host.config,
      envelope,
      store: postgresAccessStore(db),
      now: Date.now(),
      agentId,
    }),
  );
}

/**
 * May the sender of an event whose triage failed be told about it? Only when the configuration
 * alone admits them to this conversation (approvals and pairing live in Postgres, which is often
 * why triage failed). A stranger, or an unmentioned group message, must not make the bot speak —
 * not even to say that something went wrong.
 */
export async function senderMayHearOfFailure(
  row: InboxRow,
  config: EdgeclawConfig,
): Promise<boolean> {
  const { envelope, agentId } = row.event;
  if (HTTP_CHANNELS.has(envelope.channel)) return true;
  try {
    const decision = await decideAccess({
      config,
      envelope,
      store: configOnlyAccessStore(),
      now: Date.now(),
      agentId,
    });
    return decision.kind === "allow";
  } catch {
    return false;
  }
}

/** This session answered before, or the platform shows one of the agent's posts in the thread. */
async function participatedInThread(row: InboxRow, host: TriageHost): Promise<boolean> {
  if (host.store.runs.hasAnswered()) return true;
  const adapter = adapterFor(row.event.envelope.channel);
  if (!adapter?.participatedInThread) return false;
  try {
    const route = row.event.envelope.route;
    return await adapter.participatedInThread(
      route,
      sendContextFor(
        { env: host.env, config: host.config, signal: AbortSignal.timeout(10_000) },
        route,
      ),
    );
  } catch (error) {
    createLogger(
      host.config,
      host.env as Record<string, unknown>,
      { sessionKey: row.event.sessionKey },
      row.event.envelope.text ? [row.event.envelope.text] : [],
    ).warn("thread participation lookup failed; treating the message as unmentioned", { error });
    return false;
  }
}

/** session.reset / resetByType / resetByChannel: a stale session starts over before this message. */
function resetIfStale(row: InboxRow, host: TriageHost, now: number): void {
  const startedAt = host.store.meta.get("sessionStartedAt");
  if (!startedAt) return;
  // previous_response_id asks for this conversation's transcript: no freshness reset replaces it.
  if (row.event.continuesResponse) return;
  const { envelope } = row.event;
  const policy = resolveResetPolicy(host.config, {
    channel: envelope.channel,
    chatType: envelope.chatType,
    threadId: envelope.threadId,
  });
  const verdict = sessionResetDue({
    policy,
    sessionStartedAt: Number(startedAt),
    lastInteractionAt: lastInteractionAt(host.store.meta),
    now,
    timeZone: host.config.agents.defaults.userTimezone,
  });
  if (verdict.reset) host.rotateSession(verdict.reason);
}

function historyLimit(config: EdgeclawConfig, row: InboxRow): number {
  const { envelope } = row.event;
  return resolveHistoryLimit(config, {
    channel: envelope.channel,
    accountId: envelope.accountId,
    chatType: envelope.chatType,
    peerId: envelope.peerId,
  });
}

/** A message that arrived while a run is active: interrupt, or bound the queue per cap/drop. */
function applyQueueMode(row: InboxRow, host: TriageHost): void {
  const { mode, cap, drop } = queuePolicy(host.config, host.settings(), row.event.envelope.channel);
  if (mode === "interrupt") {
    host.abortActiveRun("interrupted by a newer message (queue mode interrupt)");
    return;
  }
  // OpenClaw ignores a cap below 1.
  if (cap < 1) return;
  const queued = host.store.inbox.byState("queued");
  if (queued.length <= cap) return;
  const now = Date.now();
  const victims = drop === "new" ? [row] : queued.slice(0, queued.length - cap);
  const summary = host.store.meta.getJson("droppedSummary") ?? [];
  for (const victim of victims) {
    host.store.inbox.settle(victim.seq, null, now);
    host.emit(victim.seq, {
      type: "error",
      code: "queue_full",
      message: `dropped: more than ${cap} messages queued (messages.queue.cap)`,
    });
    if (drop === "summarize") summary.push(summarizeLine(victim));
  }
  if (drop === "summarize") host.store.meta.setJson("droppedSummary", summary.slice(-cap));
}

function summarizeLine(row: InboxRow): string {
  const said = row.prepared?.text ?? row.event.envelope.text;
  const text = (row.prepared?.from ? `${row.prepared.from.label}: ${said}` : said)
    .replace(/\s+/g, " ")
    .trim();
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
